import IfmeterCore

extension Commands {
    /// `import vnstat FILE`: vnStat's file is read whole and checked before the store is claimed, so
    /// a damaged one changes nothing; each interface's history is replaced in one transaction.
    static func importVnStat(_ file: String, names: [String], vnstatConfig: String, _ context: Context) throws(CommandFailure) -> Int32 {
        // vnStat's calendar dates are cut into the daemon's days; read before root becomes the store's owner.
        if let reader = try? CounterStore(directory: context.stateDirectory, readOnly: true) {
            Context.adoptZone(of: reader)
            reader.close()
        }
        let histories: [VnStatInterface]
        let settings: VnStatSettings
        do {
            settings = try VnStatSettings.read(vnstatConfig)
            histories = try VnStatDatabase.read(file, settings: settings)
        } catch { throw .vnstat(error) }
        if let unknown = names.first(where: { name in !histories.contains { $0.name == name } }) {
            let known = histories.map(\.name).joined(separator: ", ")
            throw .usage(CommandLineError("-i \(unknown): not in \(file) (it holds \(known.isEmpty ? "no interface" : known))", command: .importHistory))
        }
        var skipped: Set<Granularity> = []
        if settings.monthRotate != 1 {
            skipped.insert(.month)
            if settings.monthRotateAffectsYears { skipped.insert(.year) }
        }
        let store = try claimStore("import", context, creating: true)
        defer { store.close() }
        let now = context.now.wall
        let classifier = context.configuration.classifier
        let kernel = Dictionary(((try? context.kernelLinks()) ?? []).map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var lines: [String] = []
        do {
            for history in histories where names.isEmpty || names.contains(history.name) {
                // ifmeter never counts loopback: its traffic crosses no link.
                if history.name == "lo" { continue }
                let counted = try store.interface(named: history.name)
                let seam = counted?.firstSeen
                let plan = VnStatSeam.plan(history, seam: seam, skipping: skipped)
                let interfaceClass = counted?.interfaceClass
                    ?? kernel[history.name].flatMap { classifier.classify($0).interfaceClass } ?? classifier.classify(name: history.name)
                try store.replaceImport(
                    ImportedInterface(name: history.name, interfaceClass: interfaceClass, source: file, seam: seam, importedAt: now, totals: plan.totals),
                    rows: plan.rows)
                var line = "\(history.name): \(plan.rows.count) rows, \(Units().bytes(plan.totals.totalBytes)) in all"
                line += seam.map { ", up to \(TimeText.moment($0)), where ifmeter's own counting began" } ?? ", all of it (ifmeter never counted it)"
                if !plan.gaps.isEmpty {
                    line += "; the \(plan.gaps.map(\.noun).joined(separator: ", ")) the seam cuts left out (vnStat kept no finer rows of it)"
                }
                if !context.configuration.counts(history.name, stored: interfaceClass, classification: kernel[history.name].map(classifier.classify)) {
                    line += "; \(interfaceClass.rawValue), not counted from now on: add Watch=\(interfaceClass.rawValue) to \(context.globals.configPath ?? Configuration.defaultPath) to count it"
                }
                lines.append(line)
            }
            for directory in context.readerDirectories { try ReadersView.withdraw(in: directory) }
        } catch {
            throw .store(error)
        }
        if !skipped.isEmpty {
            lines.append("MonthRotate=\(settings.monthRotate) in \(vnstatConfig): vnStat's \(skipped.contains(.year) ? "months and years are" : "months are") not calendar months, so \(skipped.contains(.year) ? "they were" : "they were") left out (its days were taken)")
        }
        try context.print(lines.map { $0 + "\n" }.joined() + "Imported into \(store.path); \(Estimate.basis), as vnStat's are.\n")
        return 0
    }
}
