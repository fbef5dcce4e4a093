// The C++ test program: a call site in a member of a class template in a namespace.
#include "probe.h"

namespace solver
{
template <typename T> struct Grid {
    T value;
    __attribute__((noinline)) T step(T x)
    {
        return x + value + probe("cxx_template"); /* site:cxx_template */
    }
};
} // namespace solver

int main()
{
    solver::Grid<double> grid{1.0};
    volatile double result = grid.step(2.0);
    (void)result;
    probe_report();
    return 0;
}
