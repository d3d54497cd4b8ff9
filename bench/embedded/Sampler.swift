// A daemon-shaped program for the Embedded Swift experiment (issue 15):
// ifmeterd's sampling core and nothing else. One full link dump at start
// for names, then every interval an RTM_GETSTATS dump through CKernel run
// through the real counter rules (Sources/IfmeterAccounting, compiled into
// this module), link events read as they arrive, totals kept in a
// String-keyed dictionary. No store, no metrics file, no configuration:
// what it costs in memory is a floor for an Embedded ifmeterd, not an
// estimate of one.
//
// Built twice from this same source by run.sh: Embedded Swift, and full
// Swift with ifmeterd's release flags. Neither imports Glibc (Embedded
// Swift has none); both see the C library through CSamplerLibc.
//
// Environment (there is no CommandLine in Embedded Swift):
//   SAMPLER_INTERVAL  seconds between samples (default 15)
//   SAMPLER_SAMPLES   stop after this many samples and print the totals
//                     (default: run until killed)
import CKernel
import CSamplerLibc

@main
struct Sampler {
    static func main() {
        let interval = environmentInt("SAMPLER_INTERVAL") ?? 15
        let limit = environmentInt("SAMPLER_SAMPLES")
        guard interval > 0 else { fail("SAMPLER_INTERVAL must be a positive number of seconds", 64) }

        var error: Int32 = 0
        guard let netlink = ifm_netlink_open(&error) else { fail("netlink: \(cString(ifm_netlink_error_string(error)))", 69) }
        guard let events = ifm_events_open(0, &error) else { fail("link events: \(cString(ifm_netlink_error_string(error)))", 69) }
        var list = ifm_link_list()
        var eventList = ifm_event_list()

        var names: [Int32: String] = [:]
        guard let first = fullDump(netlink, &list, names: &names) else { fail("first link dump failed", 69) }
        var tracker = CounterTracker(bootID: bootID())
        var totals: [String: LinkCounters] = [:]
        add(tracker.start(stored: StoredState(), links: first, at: now()), to: &totals)

        var samples = 0
        var nextSample = boottime() + Double(interval)
        _ = ifm_set_timer_slack(UInt64(interval) * 10_000_000)
        while true {
            let wait = Int32(max(0, (nextSample - boottime()) * 1000).rounded(.up))
            var descriptor = pollfd(fd: ifm_events_fd(events), events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, wait)
            if ready > 0 {
                var overrun: Int32 = 0
                eventList.count = 0
                if ifm_events_read(events, &eventList, &overrun) == 0 {
                    for index in 0..<eventList.count {
                        let event = eventList.events[index]
                        let link = sample(event.link, name: nil)
                        names[link.ifindex] = link.name
                        let kind: LinkEvent.Kind = event.type == Int32(IFM_LINK_DEL) ? .deleted(movedToOtherNamespace: event.moved != 0) : .new
                        if event.type == Int32(IFM_LINK_DEL) { names[link.ifindex] = nil }
                        add(tracker.observe(event: LinkEvent(kind: kind, link: link), at: now()), to: &totals)
                    }
                }
                if overrun != 0, let links = fullDump(netlink, &list, names: &names) {
                    add(tracker.observe(dump: links, at: now(), eventsWereLost: true), to: &totals)
                }
            }
            guard boottime() >= nextSample else { continue }
            nextSample += Double(interval)
            guard ifm_netlink_stats(netlink, &list) == 0 else { continue }
            var links: [LinkSample] = []
            links.reserveCapacity(list.count)
            var unknown = false
            for index in 0..<list.count {
                let entry = list.links[index]
                guard let name = names[entry.ifindex] else { unknown = true; continue }
                links.append(sample(entry, name: name))
            }
            if unknown, let full = fullDump(netlink, &list, names: &names) { links = full }
            add(tracker.observe(dump: links, at: now(), eventsWereLost: false), to: &totals)
            samples += 1
            if let limit, samples >= limit { break }
        }

        var bytes: UInt64 = 0
        for (_, counters) in totals { bytes = .saturating(bytes, plus: counters.totalBytes) }
        print("samples=\(samples) links=\(tracker.lives.count) names=\(totals.count) bytes=\(bytes)")
        ifm_link_list_free(&list)
        ifm_event_list_free(&eventList)
        ifm_events_close(events)
        ifm_netlink_close(netlink)
    }

    /// Every link with its name, kind and counters (RTM_GETLINK).
    static func fullDump(_ netlink: OpaquePointer, _ list: inout ifm_link_list, names: inout [Int32: String]) -> [LinkSample]? {
        guard ifm_netlink_dump(netlink, &list) == 0 else { return nil }
        var links: [LinkSample] = []
        links.reserveCapacity(list.count)
        names = [:]
        for index in 0..<list.count {
            let link = sample(list.links[index], name: nil)
            names[link.ifindex] = link.name
            links.append(link)
        }
        return links
    }

    static func sample(_ link: ifm_link, name: String?) -> LinkSample {
        let c = link.counters
        return LinkSample(
            ifindex: link.ifindex, name: name ?? fixedString(link.name), kind: fixedString(link.kind),
            arpType: link.arptype, flags: link.flags, operState: OperState(rawValue: link.operstate) ?? .unknown,
            counters: LinkCounters(
                rxBytes: c.rx_bytes, txBytes: c.tx_bytes, rxPackets: c.rx_packets, txPackets: c.tx_packets,
                rxErrors: c.rx_errors, txErrors: c.tx_errors, rxDropped: c.rx_dropped, txDropped: c.tx_dropped))
    }

    static func add(_ outcome: AccountingOutcome, to totals: inout [String: LinkCounters]) {
        for delta in outcome.deltas { totals[delta.name, default: .zero] += delta.counters }
    }

    /// A NUL-terminated C array member (a tuple in Swift) as a String.
    static func fixedString<T>(_ field: T) -> String {
        withUnsafeBytes(of: field) { bytes in
            String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
    }

    static func cString(_ pointer: UnsafePointer<CChar>?) -> String {
        guard let pointer else { return "" }
        return String(decoding: UnsafeBufferPointer(start: pointer, count: strlen(pointer)).lazy.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func environmentInt(_ name: String) -> Int? {
        guard let value = getenv(name) else { return nil }
        return Int(cString(value))
    }

    static func bootID() -> String {
        guard let file = fopen("/proc/sys/kernel/random/boot_id", "r") else { return "" }
        defer { fclose(file) }
        var buffer = [CChar](repeating: 0, count: 64)
        guard fgets(&buffer, Int32(buffer.count), file) != nil else { return "" }
        return cString(buffer).filter { $0 != "\n" }
    }

    static func clock(_ id: clockid_t) -> timespec {
        var time = timespec()
        clock_gettime(id, &time)
        return time
    }

    static func boottime() -> Double {
        let time = clock(CLOCK_BOOTTIME)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    static func now() -> Instant { Instant(wall: Int64(clock(CLOCK_REALTIME).tv_sec), sinceBoot: boottime()) }

    static func fail(_ message: String, _ code: Int32) -> Never {
        print("sampler: \(message)")
        exit(code)
    }
}
