import Glibc
import IfmeterCore

extension Commands {
    /// forget, rename, merge, watch, unwatch: applied here under the daemon's lock when none runs,
    /// else handed to the running daemon, which applies it between two of its commits.
    static func edit(_ edit: StoreEdit, _ context: Context) throws(CommandFailure) -> Int32 {
        let outcome = context.daemonRunning ? try askDaemon(edit, context) : try applyHere(edit, context)
        guard outcome.status == .success else { throw .refused(outcome) }
        try context.print(outcome.message + "\n")
        return 0
    }

    private static func applyHere(_ edit: StoreEdit, _ context: Context) throws(CommandFailure) -> EditOutcome {
        let store = try claimStore(edit.verb, context)
        defer { store.close() }
        do {
            let outcome = try store.apply(edit)
            // The view is of the store before: the daemon's next start publishes one of the store after.
            if outcome.status == .success {
                for directory in context.readerDirectories { try ReadersView.withdraw(in: directory) }
            }
            return outcome
        } catch {
            throw .store(error)
        }
    }

    /// The request file, SIGHUP, the reply: at most `patience` seconds, after which the request is
    /// withdrawn unless the daemon has taken it (then its reply is awaited as long again).
    private static func askDaemon(_ edit: StoreEdit, _ context: Context, patience: Double = 10) throws(CommandFailure) -> EditOutcome {
        let directory = context.stateDirectory
        let howToRun = "\(edit.verb) changes the store; run it as root (sudo ifmeter \(edit.verb)) or as the daemon's user"
        let request = directory + "/" + EditRequest.requestName, reply = directory + "/" + EditRequest.replyName
        let pid: pid_t
        do {
            try FileSystem.becomeOwner(of: directory + "/" + CounterStore.fileName)
            guard try FileSystem.lockExclusively(directory + "/" + EditRequest.lockName, recordingLiveness: false) else {
                throw CommandFailure.unavailable("\(directory): another ifmeter is editing the store; try again")
            }
            guard let running = FileSystem.lockHolder(directory + "/ifmeterd.lock") else {
                throw CommandFailure.unavailable("\(directory): ifmeterd stopped meanwhile; run ifmeter \(edit.verb) again")
            }
            pid = running
            FileSystem.remove(reply)
            try FileSystem.writeAtomically(EditRequest.encode(edit), to: request, mode: 0o600)
            try FileSystem.becomeOwner(of: request)
        } catch let failure as CommandFailure {
            throw failure
        } catch let error as SystemError where error.errno == EACCES || error.errno == EPERM {
            throw .permission("\(error): \(howToRun)")
        } catch let error as SystemError {
            throw .cannotWrite(error)
        } catch {
            throw .cannotWrite(SystemError("write", path: request, errno: EIO))
        }
        guard kill(pid, SIGHUP) == 0 else {
            FileSystem.remove(request)
            throw .permission("\(directory): ifmeterd (pid \(pid)) may not be signalled by this user: \(howToRun)")
        }
        var waited = 0.0
        while true {
            if let bytes = try? FileSystem.readBytes(reply, atMost: 4096), let outcome = EditRequest.decode(reply: bytes) {
                FileSystem.remove(reply)
                return outcome
            }
            if waited >= patience && FileSystem.exists(request) && FileSystem.move(request, to: request + ".withdrawn") {
                FileSystem.remove(request + ".withdrawn")
                throw .unavailable("ifmeterd (pid \(pid)) did not take the request within \(Int(patience)) s; nothing was changed")
            }
            if waited >= 2 * patience { throw .unavailable("ifmeterd (pid \(pid)) took the request but gave no reply within \(Int(2 * patience)) s; its journal (journalctl -u ifmeterd) says what it did") }
            usleep(20_000)
            waited += 0.02
        }
    }
}
