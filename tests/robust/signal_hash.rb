# Threads and a busy signal handler doing Hash#[]: a forked helper sends
# SIGUSR1 every 200 us while the threads look up; ruby's own timer thread
# switches the threads.  Prints the sums (same in every run) on stdout,
# and on stderr the pid and how often the handler ran (not the same).
h = {}
200.times { |i| h[i] = i * 3 }
m = Integer(ARGV[0])
nthreads = Integer(ARGV[1])
traps = 0
tsum = 0
Signal.trap("USR1") do
  traps += 1
  k = 0
  while k < 10
    tsum += h[k]
    k += 1
  end
end
parent = $$
pinger = fork do
  loop do
    Process.kill(:USR1, parent)
    sleep 0.0002
  end
end
workers = (1..nthreads).map do |t|
  Thread.new do
    s = 0
    i = 0
    while i < m
      s += h[(i + t) % 200]
      i += 1
    end
    s
  end
end
s = 0
i = 0
while i < m
  s += h[i % 200]
  i += 1
end
sums = [s] + workers.map(&:value)
Process.kill(:KILL, pinger)
Process.wait(pinger)
Signal.trap("USR1", "IGNORE")
puts "#{nthreads} threads + main x #{m} lookups: #{sums.inspect}"
$stderr.puts "pid #{$$} traps #{traps}"
