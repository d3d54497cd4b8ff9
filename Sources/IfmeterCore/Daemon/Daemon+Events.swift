extension Daemon {
    /// Reads every pending link event into the meter, ending a gathering; returns whether some were lost.
    /// When earlier messages may be `missed`, reads go past one read's bound so no message of theirs is
    /// left for a later read to take as complete.
    func readEvents(missed: CounterTracker.MissedMessages? = nil) -> Bool {
        var missed = missed
        var lost = false
        for _ in 0..<(missed == nil ? 1 : 16) {
            let batch: (events: [LinkEvent], overrun: Bool, morePending: Bool)
            do {
                batch = try events.read()
            } catch {
                noteEventsRead(.max)
                Log.error("reading link events: \(error); re-dumping")
                linkSource.note(events: [], overrun: true)
                return true
            }
            // A read stopped at its bound may have left more queued.
            noteEventsRead(batch.overrun || batch.morePending ? .max : batch.events.count)
            if !batch.events.isEmpty || batch.overrun {
                linkSource.note(events: batch.events, overrun: batch.overrun)
                if batch.overrun { missed = .lost }
                finish(meter.apply(events: batch.events, at: readClock(), missed: missed))
                if batch.overrun { Log.warning("link events were lost (event socket overrun); re-dumping to reconcile") }
                lost = lost || batch.overrun
            }
            guard batch.morePending else { break }
        }
        return lost
    }

    /// The events queued at start (since the previous process's last read); `lost`: the queue overran or was unreadable.
    func readUnreadEvents() -> (events: [LinkEvent], lost: Bool) {
        var unread: [LinkEvent] = []
        var lost = false
        for _ in 0..<16 {
            do {
                let batch = try events.read()
                unread += batch.events
                lost = lost || batch.overrun
                guard batch.morePending else { break }
            } catch {
                Log.error("reading the link events queued at start: \(error)")
                return (unread, true)
            }
        }
        return (unread, lost)
    }

    /// `earlierBoot`: the store was last saved in an earlier boot (or never), so the events predate the
    /// first start and the first dump counts from here, as it would have without them.
    func logUnread(_ unread: (events: [LinkEvent], lost: Bool), applied: Bool, earlierBoot: Bool) {
        guard !unread.events.isEmpty || unread.lost else { return }
        let overrun = unread.lost ? "; some were lost (the queue overran while no process read it)" : ""
        if earlierBoot && !applied {
            Log.info("\(counted(unread.events.count, "link event")) of this boot queued before the daemon's first start: counting starts from the first dump" + overrun)
            return
        }
        let what = "\(counted(unread.events.count, "link event")) left unread by the daemon's last process, kept by the service manager"
        if applied || unread.events.isEmpty {
            Log.notice(what + ": applied to what it saved" + overrun)
        } else {
            Log.warning(what + ": not applied, the store holds no state of this boot and namespace for them to follow" + overrun)
        }
    }

    func noteEventsRead(_ count: Int) {
        let wasGathering = gathering.isGathering
        gathering.noteRead(at: SystemClock.monotonic(), events: count)
        // Under churn the next read is already due: it keeps the short slack.
        if wasGathering || gathering.isGathering {
            TimerSlack.set(seconds: gathering.isGathering ? EventGathering.slack : sampleSlack)
        }
    }

    /// After each meter step: the stored history of names first counted (a commit would write them twice), then the log.
    func finish(_ step: Meter.Step) {
        adoptHistory()
        for life in step.begun {
            stepLines.append((.info, "\(life.name): counting (ifindex \(life.ifindex), \(meter.interfaceInfo[life.name]?.interfaceClass.rawValue ?? "other"))"))
        }
        for rename in step.renamed {
            stepLines.append((.info, "\(rename.from): renamed \(rename.to) (ifindex \(rename.ifindex)); counted on under the new name"))
        }
        for event in step.events {
            let indexes = [event.oldIfindex, event.newIfindex].map { $0.map(String.init) ?? "-" }.joined(separator: " -> ")
            stepLines.append((.info, "\(event.name): \(event.reason.rawValue) (ifindex \(indexes), \(event.loss.phrase)): \(event.detail)"))
        }
    }

    /// Once the journal or store holds what the lines tell: whoever acts on "tun0: removed" finds the end kept.
    func writeStepLines() {
        guard !stepLines.isEmpty else { return }
        Log.write(stepLines)
        stepLines.removeAll(keepingCapacity: true)
    }

    private func adoptHistory() {
        for name in meter.namesWithoutHistory {
            do {
                let stored = try store.interface(named: name)
                let resets = stored == nil ? [:] : try store.resetCounts(of: name)
                meter.adopt(name, stored: stored, resets: resets)
            } catch {
                Log.error("reading \(name)'s totals: \(error); its metrics start from what is counted now")
                meter.adopt(name, stored: nil, resets: [:])
            }
        }
    }
}
