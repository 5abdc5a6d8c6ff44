// SPDX-License-Identifier: MIT
// C++ names for tests/report/test_demangle.sh: a namespaced function, two
// template instances (one with a demangled name past the tables' 60
// columns), a member function, operator new, an (anonymous namespace)
// function that prog_cxx_other.cc has too (two functions of one name), a
// name longer than the 127 bytes a report file keeps; all called from a
// member function, whose call sites are then C++ names too.  The test
// builds it with g++ (it is not part of the C build).
#include <utility>

#define NOINLINE __attribute__((noinline))

int other_helper(int x);

// A body long enough for the shim to patch its entry.
static inline void spin()
{
	for (volatile int i = 0; i < 4; i = i + 1)
		;
}

namespace ns
{
template <typename T> NOINLINE T twice(T x)
{
	spin();
	return x + x;
}

template <typename T> NOINLINE T same(T x)
{
	spin();
	return x;
}

NOINLINE int work(int n)
{
	spin();
	return n + 1;
}

struct Box {
	int v;
	NOINLINE int get() const;
};

NOINLINE int Box::get() const
{
	spin();
	return v;
}

// Its mangled name is 151 bytes: the report file keeps 127 of them.
NOINLINE int
a_function_whose_name_is_much_longer_than_the_one_hundred_and_twenty_seven_bytes_of_a_name_that_a_report_file_keeps_and_then_some_more_words(
	int x)
{
	spin();
	return x;
}

struct Runner {
	NOINLINE int run(int n);
};
} // namespace ns

namespace
{
NOINLINE int helper(int x)
{
	spin();
	return x * 3;
}
} // namespace

ns::Box *volatile kept; // new is not elided

NOINLINE int ns::Runner::run(int n)
{
	int sum = 0, i;

	for (i = 0; i < n; i++) {
		sum += twice<int>(i);
		sum += work(i);
		sum += (int)twice<long>(64L << i);
		sum += (int)same(std::pair<long, long>(i, i)).first;
		sum += a_function_whose_name_is_much_longer_than_the_one_hundred_and_twenty_seven_bytes_of_a_name_that_a_report_file_keeps_and_then_some_more_words(
			i);
		sum += helper(i);
		sum += other_helper(i);
		kept = new Box{i};
		sum += kept->get();
		delete kept;
	}
	return sum;
}

int main()
{
	ns::Runner r;

	return r.run(3) > 0 ? 0 : 1;
}
