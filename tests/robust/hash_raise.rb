# Hash#[] whose default proc raises (for odd keys), rescued by the caller:
# ruby leaves rb_hash_aref by its own longjmp.  Prints how many lookups
# raised.
h = Hash.new do |hash, k|
  raise KeyError, "no key #{k}" if k.odd?
  k * 2
end
100.times { |j| h[2 * j] = j }
m = Integer(ARGV[0])
s = 0
raised = 0
i = 0
while i < m
  begin
    s += h[i % 300]
  rescue KeyError
    raised += 1
  end
  i += 1
end
puts "#{m} lookups, #{raised} raised, sum #{s}"
