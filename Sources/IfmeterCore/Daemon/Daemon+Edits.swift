extension Daemon {
    /// `ifmeter forget|rename|merge|watch|unwatch` while the daemon runs (`EditRequest`), at a reload,
    /// right after its commit: nothing is pending, so the ledger can take the store's totals again.
    func serveEditRequest() {
        let request = options.stateDirectory + "/" + EditRequest.requestName
        let taken = request + ".taken"
        // Renamed first: a request the asker withdrew meanwhile is gone, and is never applied.
        guard FileSystem.move(request, to: taken) else { return }
        defer { FileSystem.remove(taken) }
        let outcome: EditOutcome
        if clockTrust.isHolding {
            // What waits undated would not be in the totals the ledger takes from the store.
            outcome = EditOutcome(.unavailable, "ifmeterd waits for its clock to be synchronised (TimeSyncWaitSec=); try again in a few minutes")
        } else if let bytes = try? FileSystem.readBytes(taken, atMost: 4096), let edit = EditRequest.decode(bytes) {
            outcome = apply(edit)
        } else {
            outcome = EditOutcome(.dataError, "\(request): not an edit request from ifmeter; ignored")
        }
        Log.notice(outcome.message)
        do {
            try FileSystem.writeAtomically(EditRequest.encode(outcome), to: options.stateDirectory + "/" + EditRequest.replyName, mode: 0o600)
        } catch {
            Log.error("\(error): the edit's reply is lost")
        }
    }

    private func apply(_ edit: StoreEdit) -> EditOutcome {
        let outcome: EditOutcome
        do {
            outcome = try store.apply(edit)
            guard outcome.status == .success else { return outcome }
            switch edit {
            case .watch, .unwatch:
                configuration.chosen = try store.chosenWatches()
                rewatch()
            case .forget, .rename, .merge:
                for name in edit.names {
                    let stored = try store.interface(named: name)
                    meter.storeEdited(name, stored: stored, resets: stored == nil ? [:] : try store.resetCounts(of: name))
                }
                publishView()
                publishMetrics()
            }
        } catch {
            return EditOutcome(error.exitCode, "\(edit.verb): \(error); the store is as it was")
        }
        return outcome
    }
}
