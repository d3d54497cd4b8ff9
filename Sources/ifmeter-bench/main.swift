// make bench's measuring tool: one subcommand a run (described at its `case`), printing key=value lines.
import CKernel
import Glibc
import IfmeterCore

func fail(_ message: String) -> Never {
    Output.standardError("ifmeter-bench: \(message)\n")
    exit(1)
}

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

/// CPU time of this process, user and system.
func processCPU() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

func now() -> Double { SystemClock.monotonic() }

func childrenCPU() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_CHILDREN.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

func spawn(_ command: [String], environment: [String]? = nil) -> pid_t {
    var pid: pid_t = 0
    let argv = command.map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    var fileActions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&fileActions)
    posix_spawn_file_actions_addopen(&fileActions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addopen(&fileActions, 2, "/dev/null", O_WRONLY, 0)
    defer { posix_spawn_file_actions_destroy(&fileActions) }
    let status: Int32
    if let environment {
        let envp = environment.map { strdup($0) } + [nil]
        defer { envp.forEach { free($0) } }
        status = posix_spawnp(&pid, command[0], &fileActions, nil, argv, envp)
    } else {
        status = posix_spawnp(&pid, command[0], &fileActions, nil, argv, environ)
    }
    if status != 0 { fail("cannot run \(command[0]): \(String(cString: strerror(status)))") }
    return pid
}

func wait(_ pid: pid_t) {
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard let verb = arguments.first else { fail("usage: ifmeter-bench dump|stats|procnetdev|spawn|ready|store-year ...") }
let count = arguments.count > 1 ? Int(arguments[1]) ?? 0 : 0

switch verb {
// dump N: N bare libnl link dumps through CKernel (RTM_GETLINK).
case "dump":
    var error: Int32 = 0
    guard let handle = ifm_netlink_open(&error) else { fail("netlink: \(error)") }
    var list = ifm_link_list()
    var walls: [Double] = []
    var cpus: [Double] = []
    var links = 0
    for _ in 0..<max(count, 1) {
        let wall = now()
        let cpu = SystemClock.processCPU()
        guard ifm_netlink_dump(handle, &list) == 0 else { fail("dump failed") }
        cpus.append(SystemClock.processCPU() - cpu)
        walls.append(now() - wall)
        links = list.count
    }
    print("links=\(links) dump_wall_seconds=\(median(walls)) dump_cpu_seconds=\(median(cpus))")
// stats N: N statistics dumps through CKernel (RTM_GETSTATS).
case "stats":
    var error: Int32 = 0
    guard let handle = ifm_netlink_open(&error) else { fail("netlink: \(error)") }
    var list = ifm_link_list()
    var cpus: [Double] = []
    for _ in 0..<max(count, 1) {
        let cpu = SystemClock.processCPU()
        guard ifm_netlink_stats(handle, &list) == 0 else { fail("statistics dump failed") }
        cpus.append(SystemClock.processCPU() - cpu)
    }
    print("links=\(list.count) stats_cpu_seconds=\(median(cpus))")
// metrics N FILE [B]: 200 renders and atomic writes of a metrics file for N tunnels, the daemon's per-sample
// export, with B budgets on the tunnel class (default 0), their use summed over every tunnel as the daemon does.
case "metrics":
    guard arguments.count == 3 || arguments.count == 4 else { fail("metrics N FILE [BUDGETS]") }
    let budgetCount = arguments.count == 4 ? Int(arguments[3]) ?? 0 : 0
    let info = InterfaceInfo(interfaceClass: .tunnel, signal: "kind tun", kind: "tun")
    var interfaces = (0..<count).map {
        MetricsInterface(device: "tun\($0)", info: info, ifindex: Int32($0 + 2),
                         totals: LinkCounters(rxBytes: 1_000_000, txBytes: 2_000_000, rxPackets: 1000, txPackets: 2000),
                         resets: ["removed": 1])
    }
    let metrics = MetricsFile(path: arguments[2])
    let ledger = BudgetLedger(statuses: (0..<budgetCount).map { index in
        let budget = Budget(target: .interfaceClass(.tunnel), bytes: 1_000_000_000, period: BudgetPeriod.allCases[index % 5])
        return BudgetStatus(
            budget: budget, periodStart: 1_799_000_000, periodEnd: 1_801_000_000, billingDay: 1, used: 0,
            projection: BudgetProjection(used: 0, cycleStart: 1_799_000_000, cycleEnd: 1_801_000_000, countingSince: 0, now: 1_800_000_000), state: .ok)
    }, baseline: Dictionary(uniqueKeysWithValues: interfaces.map { ($0.device, $0.totals) }))
    var cpus: [Double] = []
    for round in 0..<200 {
        for index in interfaces.indices { interfaces[index].totals.rxBytes += UInt64(round) }
        let cpu = SystemClock.processCPU()
        do {
            var snapshot = MetricsSnapshot(interfaces: interfaces, lastSample: 1_800_000_000 + Double(round), sampleDuration: 0.001,
                                           storeWriteErrors: 0, lastCommit: 1_800_000_000)
            if budgetCount > 0 { snapshot.budgets = ledger.current(interfaces) }
            try metrics.write(snapshot)
        } catch { fail("\(error)") }
        cpus.append(SystemClock.processCPU() - cpu)
    }
    print("interfaces=\(count) metrics_cpu_seconds=\(median(cpus))")
// procnetdev N: N reads of /proc/net/dev.
case "procnetdev":
    var walls: [Double] = []
    var cpus: [Double] = []
    for _ in 0..<max(count, 1) {
        let wall = now()
        let cpu = SystemClock.processCPU()
        guard let bytes = try? FileSystem.readBytes("/proc/net/dev", atMost: 64 << 20), !bytes.isEmpty else { fail("cannot read /proc/net/dev") }
        cpus.append(SystemClock.processCPU() - cpu)
        walls.append(now() - wall)
    }
    print("procnetdev_wall_seconds=\(median(walls)) procnetdev_cpu_seconds=\(median(cpus))")
// spawn N -- CMD ARGS: N runs of a command; the median wall time and the children's CPU.
case "spawn":
    guard let separator = arguments.firstIndex(of: "--") else { fail("spawn N -- COMMAND") }
    let command = Array(arguments[(separator + 1)...])
    var walls: [Double] = []
    var cpus: [Double] = []
    for _ in 0..<max(count, 1) {
        let wall = now()
        let cpu = childrenCPU()
        wait(spawn(command))
        walls.append(now() - wall)
        cpus.append(childrenCPU() - cpu)
    }
    print("spawn_wall_seconds=\(median(walls)) spawn_cpu_seconds=\(median(cpus))")
// ready N -- CMD ARGS: N starts of a notify daemon; the median time to READY=1.
case "ready":
    guard let separator = arguments.firstIndex(of: "--") else { fail("ready N -- COMMAND") }
    let command = Array(arguments[(separator + 1)...])
    let path = "/tmp/ifmeter-bench-notify-\(getpid())"
    unlink(path)
    let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { buffer in for (index, byte) in path.utf8.enumerated() { buffer[index] = byte } }
    let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
    if bound != 0 { fail("bind \(path)") }
    defer { unlink(path) }
    var times: [Double] = []
    var environment: [String] = []
    var entry = environ
    while let pointer = entry.pointee { environment.append(String(cString: pointer)); entry += 1 }
    environment.append("NOTIFY_SOCKET=\(path)")
    var buffer = [UInt8](repeating: 0, count: 4096)
    for _ in 0..<max(count, 1) {
        let started = now()
        let pid = spawn(command, environment: environment)
        var ready = false
        while !ready {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 10_000) == 1 else { fail("no READY=1 within 10 s") }
            let received = recv(fd, &buffer, buffer.count, 0)
            ready = String(decoding: buffer[0..<max(received, 0)], as: UTF8.self).split(separator: "\n").contains("READY=1")
        }
        times.append(now() - started)
        kill(pid, SIGTERM)
        wait(pid)
    }
    print("ready_seconds=\(median(times))")
// store-year IFACES DIR: a year of commits every 300 s through the real store.
case "store-year":
    guard arguments.count == 3, let interfaces = Int(arguments[1]) else { fail("store-year IFACES DIR") }
    let directory = arguments[2]
    let store: CounterStore
    do { store = try CounterStore(directory: directory) } catch { fail("\(error)") }
    var tracker = CounterTracker(bootID: "bench")
    let start: Int64 = 1_767_225_600  // 2026-01-01 UTC
    var counters = [UInt64](repeating: 0, count: interfaces)
    func links() -> [LinkSample] {
        (0..<interfaces).map { LinkSample(ifindex: Int32($0 + 2), name: "tun\($0)", kind: "tun", counters: LinkCounters(rxBytes: counters[$0], txBytes: counters[$0] / 2, rxPackets: counters[$0] / 1000, txPackets: counters[$0] / 2000)) }
    }
    var pending = PendingWrites()
    for index in 0..<interfaces { pending.interfaces["tun\(index)"] = InterfaceInfo(interfaceClass: .tunnel, signal: "kind tun", kind: "tun") }
    pending.record(tracker.start(stored: StoredState(), links: links(), at: Instant(wall: start, sinceBoot: 0)), at: Instant(wall: start, sinceBoot: 0))
    let commits = 365 * 24 * 12
    let began = now()
    for commit in 1...commits {
        let moment = Instant(wall: start + Int64(commit) * 300, sinceBoot: Double(commit) * 300)
        for index in 0..<interfaces { counters[index] += UInt64(1_000_000 + (commit * 7919 + index * 104_729) % 5_000_000) }
        pending.record(tracker.observe(dump: links(), at: moment, eventsWereLost: false), at: moment)
        do {
            try store.commit(pending, openLives: tracker.lives.values, bootID: "bench", at: moment.wall, retention: Retention(), intervals: (15, 300))
        } catch { fail("\(error)") }
        pending = PendingWrites()
    }
    store.close()
    var info = stat()
    stat(directory + "/" + CounterStore.fileName, &info)
    print("store_bytes=\(info.st_size) commits=\(commits) seconds=\(now() - began)")
// commits N IFACES DIR: the wall time of one store commit of IFACES links (median of N), as the
// daemon commits: what synchronous=FULL's fsync of the WAL costs on DIR's disk.
case "commits":
    guard arguments.count == 4, let count = Int(arguments[1]), let interfaces = Int(arguments[2]), count > 0 else { fail("commits N IFACES DIR") }
    let store: CounterStore
    do { store = try CounterStore(directory: arguments[3]) } catch { fail("\(error)") }
    var tracker = CounterTracker(bootID: "bench")
    func links(_ step: Int) -> [LinkSample] {
        (0..<interfaces).map { LinkSample(ifindex: Int32($0 + 2), name: "tun\($0)", kind: "tun", counters: LinkCounters(rxBytes: UInt64(step * 1_000_000), txBytes: UInt64(step * 500_000))) }
    }
    var pending = PendingWrites()
    for index in 0..<interfaces { pending.interfaces["tun\(index)"] = InterfaceInfo(interfaceClass: .tunnel, signal: "kind tun", kind: "tun") }
    let wall = Int64(time(nil))
    pending.record(tracker.start(stored: StoredState(), links: links(0), at: Instant(wall: wall, sinceBoot: 0)), at: Instant(wall: wall, sinceBoot: 0))
    var times: [Double] = []
    for step in 1...count {
        let moment = Instant(wall: wall + Int64(step), sinceBoot: Double(step))
        pending.record(tracker.observe(dump: links(step), at: moment, eventsWereLost: false), at: moment)
        let began = now()
        do {
            try store.commit(pending, openLives: tracker.lives.values, bootID: "bench", at: moment.wall, retention: Retention(), intervals: (15, 300))
        } catch { fail("\(error)") }
        times.append(now() - began)
        pending = PendingWrites()
    }
    store.close()
    print("commit_ms=\(median(times) * 1000)")
// meter-churn SECONDS FILE [DIR]: the daemon's own work under churn seen by every daemon (a 10 s
// tunnel life every 0.15 s beside 50 tuns, reads every EventGathering.spacing, a dump every 15 s)
// through the meter and a journal at FILE; with DIR each full journal is committed to a store there.
case "meter-churn":
    guard (3...4).contains(arguments.count), let seconds = Int(arguments[1]), seconds > 0 else { fail("meter-churn SECONDS FILE [DIR]") }
    let store: CounterStore?
    do { store = try arguments.count == 4 ? CounterStore(directory: arguments[3]) : nil } catch { fail("\(error)") }
    let tunnel = Classification(.tunnel, by: .linkKind("tun"))
    var meter = Meter(
        bootID: "bench", namespace: 1, width: .bits64,
        policy: Meter.Policy(watchedClasses: InterfaceClass.watchedByDefault, maxRateBitsPerSecond: 1_000_000_000) { _ in tunnel },
        storedInterfaces: [])
    let steady = (0..<50).map { LinkSample(ifindex: Int32($0 + 2), name: "tun\($0)", kind: "tun", counters: LinkCounters()) }
    func instant(_ second: Double) -> Instant { Instant(wall: 1_800_000_000 + Int64(second), sinceBoot: 100 + second) }
    _ = meter.start(stored: StoredState(lastBootID: "bench", lastNamespace: 1, presentLinks: [:]), links: steady, at: instant(0))
    let journal: CommitJournal
    do {
        journal = try CommitJournal(file: try CommitJournal.claim(arguments[2]).file, header: JournalHeader(storeID: 1, generation: 1, bootID: "bench", namespace: 1))
    } catch { fail("\(error)") }
    // Life n begins at 0.15 n s as ifindex 100 + n under name s(n % 90) and
    // ends 10 s later having received two packets of 500 bytes.
    func life(_ n: Int, received: UInt64 = 0) -> LinkSample {
        LinkSample(ifindex: Int32(100 + n), name: "s\(n % 90)", kind: "tun", counters: LinkCounters(rxBytes: received * 500, rxPackets: received))
    }
    var open: [Int] = []
    var begun = 0
    var lives = 0
    var generation: UInt64 = 1
    var journaled = 0
    var commits = 0
    var commitCPU = 0.0
    let cpuBefore = processCPU()
    var t = 0.0
    var nextDump = 15.0
    while t + EventGathering.spacing <= Double(seconds) {
        t += EventGathering.spacing
        var events: [LinkEvent] = []
        while Double(begun) * 0.15 < t {
            // Created, brought up, carrier: three RTM_NEWLINK.
            for _ in 0..<3 { events.append(LinkEvent(kind: .new, link: life(begun))) }
            open.append(begun)
            begun += 1
        }
        while let first = open.first, Double(first) * 0.15 + 10 < t {
            events.append(LinkEvent(kind: .deleted(movedToOtherNamespace: false), link: life(first, received: 2)))
            open.removeFirst()
            lives += 1
        }
        _ = meter.apply(events: events, at: instant(t))
        if t >= nextDump {
            _ = meter.apply(dump: steady + open.map { life($0, received: 1) }, eventsWereLost: false, at: instant(t))
            nextDump += 15
        }
        guard meter.hasUncommittedLifeChanges else { continue }
        let batch = meter.nextCommit
        if journal.size >= 256 * 1024 {
            // Where the daemon commits the store.
            journaled += journal.size
            if let store {
                let began = processCPU()
                do {
                    try store.commit(
                        journal.records + [JournalRecord(time: instant(t).wall, batch: batch)], bootID: "bench", namespace: 1,
                        journalGeneration: generation, retention: Retention(), intervals: (15, 300))
                } catch { fail("\(error)") }
                commitCPU += processCPU() - began
                commits += 1
                meter.committed(batch)
            }
            generation += 1
            do { try journal.startGeneration(generation) } catch { fail("\(error)") }
            if store != nil { continue }
        }
        do { try journal.append(JournalRecord(time: instant(t).wall, batch: batch)) } catch { fail("\(error)") }
        meter.committed(batch)
    }
    let cpu = processCPU() - cpuBefore - commitCPU
    journaled += journal.size
    print("lives=\(lives) cpu_seconds=\(cpu) cpu_us_per_life=\(cpu / Double(max(lives, 1)) * 1e6) journal_bytes_per_life=\(journaled / max(lives, 1))")
    if store != nil {
        print("commits=\(commits) commit_cpu_seconds=\(commitCPU) commit_ms=\(commitCPU / Double(max(commits, 1)) * 1e3) commit_us_per_life=\(commitCPU / Double(max(lives, 1)) * 1e6)")
    }
default:
    fail("unknown subcommand \(verb)")
}
