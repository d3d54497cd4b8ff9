import Glibc

/// The write end for the signal handler; set once, before any handler can run.
nonisolated(unsafe) private var signalPipeWriteEnd: Int32 = -1

/// Signals as bytes on a pipe (the self-pipe trick): the handler writes the signal number and the
/// loop reads it like any other event; one that arrives before the loop watches the pipe waits in it.
package enum SignalPipe {
    /// Installs handlers for `signals`; returns the pipe's read end.
    package static func install(_ signals: [Int32]) throws -> Int32 {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw SystemError("pipe", path: "signal pipe", errno: errno) }
        for end in ends {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        signalPipeWriteEnd = ends[1]
        for number in signals {
            var action = sigaction()
            // Async-signal-safe: write(2) only, errno preserved.
            action.__sigaction_handler.sa_handler = { received in
                let saved = errno
                var byte = UInt8(truncatingIfNeeded: received)
                _ = write(signalPipeWriteEnd, &byte, 1)
                errno = saved
            }
            action.sa_flags = SA_RESTART
            sigemptyset(&action.sa_mask)
            guard sigaction(number, &action, nil) == 0 else { throw SystemError("sigaction", path: "signal \(number)", errno: errno) }
        }
        // A blocked mask is inherited across exec (some launchers block nearly everything): a handled signal
        // that stays blocked would never reach the pipe.
        var handled = sigset_t()
        sigemptyset(&handled)
        for number in signals { sigaddset(&handled, number) }
        guard pthread_sigmask(SIG_UNBLOCK, &handled, nil) == 0 else { throw SystemError("pthread_sigmask", path: "signals", errno: errno) }
        return ends[0]
    }

    /// The signals waiting in the pipe, oldest first.
    package static func drain(_ readEnd: Int32) -> [Int32] {
        var received: [Int32] = []
        var buffer = [UInt8](repeating: 0, count: 64)
        while true {
            let count = read(readEnd, &buffer, buffer.count)
            if count <= 0 { return received }
            received += buffer[0..<count].map { Int32($0) }
        }
    }
}
