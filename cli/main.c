/* The nhens program: everything is in the CLI module so tests can drive it in-process. */
#include "cli.h"

int main(int argc, char **argv)
{
    return nh_cli_main(argc, argv);
}
