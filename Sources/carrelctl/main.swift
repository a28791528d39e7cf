import Glibc

// Carrel may close a refused connection before the request is written; the
// answer it sent is still read.
signal(SIGPIPE, SIG_IGN)

CarrelCtl.main()
