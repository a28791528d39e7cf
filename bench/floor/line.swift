// The least a Swift program that writes a line holds, built as Carrel is
// shipped (release, static standard library): prints "ready", then waits for
// a signal. bench/run reads its peak RSS and its executable's resident pages
// beside line.c's.

import Glibc

print("ready")
fflush(stdout)
pause()
