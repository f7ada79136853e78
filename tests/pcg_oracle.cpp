// Test oracle: Debian's pcg-cpp (O'Neill's reference implementation) prints a pcg32 stream.
// usage: pcg_oracle STATE SEQUENCE COUNT
#include <cstdio>
#include <cstdlib>
#include <pcg_random.hpp>

int main(int argc, char **argv)
{
    if (argc != 4)
        return 2;
    pcg32 rng(std::strtoull(argv[1], nullptr, 0), std::strtoull(argv[2], nullptr, 0));
    long count = std::strtol(argv[3], nullptr, 10);
    for (long i = 0; i < count; ++i)
        std::printf("%08x\n", static_cast<unsigned>(rng()));
    return 0;
}
