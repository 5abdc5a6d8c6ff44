# SPDX-License-Identifier: MIT
# Does a Hash lookup get slower as the Hash grows?  Builds a Hash of n
# Integer keys, then does a fixed number of random hits h[k].  Under
# cacheshim every h[k] is one call of rb_hash_aref (vm_opt_aref ->
# rb_hash_aref@plt), and for more than 8 entries one of rb_st_lookup.
#
#   ruby hash_lookup.rb [--size N] [--lookups M] [--seed S]
#
# Without --size it runs every size of SIZES in one process (handy without
# cacheshim); run.sh runs one size per process so that each profile holds
# the lookups of one size only.

SIZES = [8, 64, 512, 4096, 32_768, 262_144, 2_097_152].freeze

sizes = SIZES
lookups = 20_000
seed = 42
USAGE = "usage: ruby #{$PROGRAM_NAME} [--size N] [--lookups M] [--seed S]"

def number(opt, val, min)
  n = Integer(val.to_s, 10)
  raise ArgumentError if n < min
  n
rescue ArgumentError
  abort "hash_lookup.rb: #{opt} needs a whole number >= #{min}\n#{USAGE}"
end

args = ARGV.dup
until args.empty?
  opt = args.shift
  val = args.shift
  case opt
  when '--size' then sizes = [number(opt, val, 1)]
  when '--lookups' then lookups = number(opt, val, 1)
  when '--seed' then seed = number(opt, val, 0)
  else abort "hash_lookup.rb: unknown option #{opt}\n#{USAGE}"
  end
end

def run(size, lookups, seed)
  rng = Random.new(seed)
  # Random keys, so that neighbouring entries are not looked up together.
  keys = Array.new(size) { rng.rand(1 << 48) }
  h = {}
  keys.each { |k| h[k] = k }
  probes = Array.new(lookups) { keys[rng.rand(size)] }

  hits = 0
  t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond)
  probes.each { |k| hits += 1 if h[k] } # the measured calls
  t1 = Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond)
  printf("size %8d  lookups %6d  hits %6d  %6.1f ns per lookup (Ruby loop included)\n",
         size, lookups, hits, (t1 - t0).fdiv(lookups))
end

sizes.each { |n| run(n, lookups, seed) }
