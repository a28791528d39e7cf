import ArgumentParser
import Glibc

// Block the signals Carrel takes through the event loop's signalfd before any
// other thread exists, so every thread inherits the mask and none of them can
// swallow a SIGCHLD or SIGTERM meant for the loop.
var handledSignals = sigset_t()
sigemptyset(&handledSignals)
for signal in [SIGCHLD, SIGTERM, SIGINT, SIGUSR1, SIGUSR2] { sigaddset(&handledSignals, signal) }
pthread_sigmask(SIG_BLOCK, &handledSignals, nil)
// A client that disconnects mid-write must not kill the compositor.
signal(SIGPIPE, SIG_IGN)

CarrelCommand.main(CarrelCommand.normalised(Array(CommandLine.arguments.dropFirst())))
