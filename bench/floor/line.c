// The least a C program that writes a line holds: prints "ready", then waits
// for a signal. bench/run reads its peak RSS beside line.swift's.
#include <stdio.h>
#include <unistd.h>

int main(void) {
    puts("ready");
    fflush(stdout);
    pause();
    return 0;
}
