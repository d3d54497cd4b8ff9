extension Daemon {
    /// The time now, and what the clock did since the last look: a step re-dates what waits for the
    /// commit; a hold that ends is said, and the next sample commits.
    func readClock() -> Instant {
        let now = clock.now()
        let change = clockTrust.observe(clockStatus.reading(now))
        if let step = change.step {
            let seconds = Int64(step.rounded())
            meter.redatePending(by: seconds)
            journal.open?.redate(by: seconds)
            if seconds < 0 { futureRowsPossible = true }
            Log.notice("the wall clock stepped \(seconds > 0 ? "forward" : "back") by \(counted(Int(abs(seconds)), "second")); what waits for the commit is dated anew")
        }
        switch change.released {
        case .synchronized?: Log.notice("the clock is synchronised: dating traffic from now, what waited included")
        case .pastLastCommit?: Log.notice("the clock is past the last commit again: dating traffic from now")
        case .waitedOut?:
            Log.warning("the clock is still not synchronised after TimeSyncWaitSec=\(Int(configuration.timeSyncWait)): dating traffic by it; no prune until it is")
        case nil: break
        }
        return now
    }

    /// Rows a wrong clock left after now move into now's rows, once a trusted clock says so.
    func redateFutureRows(at now: Instant) {
        guard futureRowsPossible, clockTrust.mayJudgeHistory else { return }
        do {
            if try store.redateFuture(at: now.wall) {
                Log.notice("rows dated after \(TimeText.moment(now.wall)) by a wrong clock were moved into the current ones")
            }
            futureRowsPossible = false
        } catch {
            Log.error("moving rows dated in the future: \(error); tried again at the next commit")
        }
    }

    static func describe(_ hold: ClockTrust.Hold, wait: Double) -> String {
        let why = switch hold {
        case .beforeLastCommit(let last): "the clock is before the store's last commit (\(TimeText.moment(last)))"
        case .notSynchronized: "the clock is not synchronised yet"
        }
        return "\(why): counting, but dating traffic waits for it, \(Int(wait)) s at most (TimeSyncWaitSec=)"
    }
}
