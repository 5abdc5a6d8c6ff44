# Fiber switches inside rb_hash_aref.  A default proc that resumes a
# generator fiber (which itself looks up while the caller's Hash#[] is
# suspended on the other stack), and F fibers that each wait inside
# Hash#[] (their default proc yields), resumed R times each: at exit each
# of them is still inside one Hash#[] call that never returns.
table = {}
10.times { |j| table[j] = j + 1 }
gen = Fiber.new do
  n = 0
  loop do
    n += table[n % 10]
    Fiber.yield n
  end
end
h = Hash.new { |hash, k| gen.resume + k }
m = Integer(ARGV[0])
s = 0
m.times { |i| s += h[i] }
waiting = Hash.new do |hash, k|
  Fiber.yield k
  k * 10
end
nf = Integer(ARGV[1])
r = Integer(ARGV[2])
fibers = (1..nf).map do |j|
  Fiber.new do
    t = 0
    loop { t += waiting[j] }
  end
end
r.times { fibers.each(&:resume) }
puts "#{m} lookups through a fiber: sum #{s}; #{nf} fibers resumed #{r} times"
