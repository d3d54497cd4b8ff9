import Glibc

/// Why a PNG could not be made; nothing is written then.
package enum PNGRenderingError: Error, Sendable, Equatable {
    /// rsvg-convert is in none of the directories searched.
    case rendererMissing(searched: [String])
    /// It ran and failed: its exit status or signal and the first line it wrote to its errors.
    case rendererFailed(program: String, how: String, message: String)

    package var description: String {
        switch self {
        case .rendererMissing(let searched):
            "a PNG needs \(PNGRenderer.programName), "
                + (searched.isEmpty ? "and PATH names no absolute directory to find it in" : "found in none of \(searched.joined(separator: ":"))")
                + ": install \(PNGRenderer.debianPackage), or write an SVG"
        case .rendererFailed(let program, let how, let message):
            "\(program) \(how)\(message.isEmpty ? "" : ": \(message)"); no PNG written"
        }
    }
}

/// SVG to PNG through librsvg's rsvg-convert, run as a child without a shell.
package enum PNGRenderer {
    package static let programName = "rsvg-convert"
    package static let debianPackage = "librsvg2-bin"
    /// Where it is looked for when PATH is unset, as execvp's default.
    package static let defaultSearch = ["/usr/local/bin", "/usr/bin", "/bin"]

    /// The directories searched: PATH's absolute entries in order. An empty or relative entry is
    /// skipped: it would run whatever rsvg-convert the current directory holds.
    package static func searchDirectories(path: String?) -> [String] {
        guard let path else { return defaultSearch }
        var seen: Set<String> = []
        return path.split(separator: ":", omittingEmptySubsequences: true).map(String.init)
            .filter { $0.hasPrefix("/") && seen.insert($0).inserted }
    }

    /// The first executable rsvg-convert in `directories`, or nil.
    package static func locate(in directories: [String], isExecutable: (String) -> Bool = FileSystem.isExecutableFile) -> String? {
        directories.lazy.map { ($0.hasSuffix("/") ? $0 : $0 + "/") + programName }.first(where: isExecutable)
    }

    /// The PNG of `svg`, drawn at the size the SVG declares.
    package static func render(_ svg: String, with program: String) throws(PNGRenderingError) -> [UInt8] {
        let finished: ChildProcess.Finished
        do {
            finished = try ChildProcess.run(program, arguments: [programName, "--format", "png"], input: Array(svg.utf8))
        } catch {
            throw .rendererFailed(program: program, how: "could not run", message: error.reason)
        }
        let message = firstLine(finished.errors)
        if let signal = finished.signal { throw .rendererFailed(program: program, how: "killed by signal \(signal)", message: message) }
        if finished.exitStatus != 0 {
            throw .rendererFailed(program: program, how: "exited with status \(finished.exitStatus ?? -1)", message: message)
        }
        guard pngSize(finished.output) != nil else { throw .rendererFailed(program: program, how: "wrote no PNG", message: message) }
        return finished.output
    }

    /// A PNG's width and height from its signature and IHDR chunk, or nil when it is not a PNG.
    package static func pngSize(_ bytes: [UInt8]) -> (width: Int, height: Int)? {
        let signature: [UInt8] = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]
        // The signature, then IHDR first: length 13, type, width and height big-endian (PNG 11.2.2).
        guard bytes.count >= 24, Array(bytes[0..<8]) == signature, Array(bytes[8..<16]) == [0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52] else { return nil }
        func word(_ at: Int) -> Int { bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
        return (word(16), word(20))
    }

    /// The renderer's complaint, one line of at most 200 characters, so the error stays one line.
    static func firstLine(_ bytes: [UInt8]) -> String {
        let text = String(decoding: bytes, as: UTF8.self)
        let line = text.split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        return String(line.filter { !$0.isASCII || $0.asciiValue! >= 0x20 }.prefix(200))
    }
}
