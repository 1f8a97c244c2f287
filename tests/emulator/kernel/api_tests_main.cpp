// Per-API semantic tests of the emulator, one case per invocation: api_tests <case>.
// Prints "PASS <case>" and exits 0, or prints each mismatch and exits 1. Misuse cases are
// expected to abort with a message; pytest runs every case in its own process.
// The cases live in api_*_tests.cpp, grouped by the API area they test; each file adds its own to
// the table here.
#include <string>

#include "api_case.h"

int main(int argc, char **argv)
{
    ApiCases cases;
    AddVectorCases(cases);
    AddCubeCases(cases);
    AddCopyCases(cases);
    AddBufferCases(cases);
    AddSyncCases(cases);
    if (argc != 2 || cases.count(argv[1]) == 0) {
        for (auto &c : cases) std::printf("%s\n", c.first.c_str());
        return argc == 2 && std::string(argv[1]) == "--list" ? 0 : 2;
    }
    cases.at(argv[1])();
    if (g_failures == 0) std::printf("PASS %s\n", argv[1]);
    return g_failures == 0 ? 0 : 1;
}
