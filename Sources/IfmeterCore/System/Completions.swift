/// The `ifmeter` command line as data: every command and option the parser
/// accepts and what each option's value is. The shell completions are
/// generated from it, and the tests hold it to the help texts and to the
/// parser itself (every option here is accepted), so none of them can drift.
public enum CommandTable {
    public enum Value: Sendable, Equatable {
        case none, file, directory, interface, seconds, count, date
        case choice([String])
    }

    public struct Option: Sendable {
        public var names: [String]
        public var value: Value
        public var summary: String
        /// May be given more than once (`-i wlan0 -i wwan0`).
        public var repeatable = false
        /// A value the parser accepts, for the test that runs each option.
        public var example: String? {
            switch value {
            case .none: nil
            case .file: "/dev/null"
            case .directory: "/"
            case .interface: "lo"
            case .seconds: "0.1"
            case .count: "1"
            case .date: "2024-01-01"
            case .choice(let choices): choices.first
            }
        }
    }

    public struct Command: Sendable {
        public var name: String
        public var summary: String
        /// Takes interface names as operands.
        public var interfaceOperands = false
        public var options: [Option] = []
    }

    /// Valid before or after any command.
    public static let globals: [Option] = [
        Option(names: ["--state-dir"], value: .directory, summary: "the daemon's state directory"),
        Option(names: ["--config"], value: .file, summary: "configuration file"),
        Option(names: ["--json"], value: .none, summary: "machine-readable output"),
        Option(names: ["--si"], value: .none, summary: "1000-based units"),
        Option(names: ["--bytes"], value: .none, summary: "raw byte counts"),
        Option(names: ["--byte-rates"], value: .none, summary: "rates in bytes per second"),
        Option(names: ["-h", "--help"], value: .none, summary: "help"),
    ]

    /// Valid only as the first word.
    public static let leading: [Option] = [
        Option(names: ["--version"], value: .none, summary: "the version"),
    ]

    static let interfaces = Option(names: ["-i", "--interface"], value: .interface, summary: "only this interface", repeatable: true)
    static let limit = Option(names: ["--limit"], value: .count, summary: "keep the latest N rows")
    static let begin = Option(names: ["--begin"], value: .date, summary: "from this date (YYYY-MM-DD)")
    static let end = Option(names: ["--end"], value: .date, summary: "to this date, inclusive")

    static func history(_ name: String, _ summary: String) -> Command {
        Command(name: name, summary: summary, options: [interfaces, limit, begin, end])
    }

    public static let commands: [Command] = [
        Command(name: "status", summary: "totals, rates, resets, daemon health, budgets", interfaceOperands: true),
        history("fiveminutes", "traffic per five minutes"),
        history("hours", "traffic per hour"),
        history("days", "traffic per day"),
        history("months", "traffic per month"),
        history("years", "traffic per year"),
        history("top", "the largest days"),
        Command(name: "classes", summary: "totals per class"),
        Command(name: "events", summary: "the reset log", options: [interfaces, limit]),
        Command(name: "live", summary: "rates per interface until Ctrl-C", options: [
            Option(names: ["--all"], value: .none, summary: "every link, also unwatched ones"),
            Option(names: ["--interval"], value: .seconds, summary: "seconds between refreshes"),
            Option(names: ["--count"], value: .count, summary: "stop after N refreshes"),
        ]),
        Command(name: "export", summary: "stored records as CSV or JSON lines", options: [
            Option(names: ["--format"], value: .choice(["csv", "jsonl"]), summary: "output format"),
            Option(names: ["--granularity"], value: .choice(["5min", "hour", "day", "month", "year"]), summary: "bucket size"),
            begin, end,
        ]),
        Command(name: "graph", summary: "an SVG picture: summary, hourly, daily, monthly or top", options: [
            Option(names: ["--svg"], value: .file, summary: "the SVG file to write (- for standard output)"),
            Option(names: ["--kind"], value: .choice(["summary", "hourly", "daily", "monthly", "top"]), summary: "the picture"),
            Option(names: ["--days"], value: .count, summary: "days shown (daily)"),
        ]),
        Command(name: "check", summary: "exit 1 or 2 when a data budget is at risk or exceeded"),
        Command(name: "interfaces", summary: "links, their class and why, raw counters", options: [
            Option(names: ["--all"], value: .none, summary: "also other and ignored interfaces"),
        ]),
    ]

    /// Every option that takes a value, by name.
    static var valued: [(name: String, value: Value)] {
        var seen: Set<String> = []
        var result: [(String, Value)] = []
        for option in globals + commands.flatMap(\.options) where option.value != .none {
            for name in option.names where seen.insert(name).inserted { result.append((name, option.value)) }
        }
        return result
    }
}

/// `ifmeter completions bash|zsh|fish`: the completion script for a shell,
/// generated from `CommandTable` (not listed in the help: packagers run it).
public enum Completions {
    public static func main(_ words: [String]) -> Int32 {
        guard words.count == 1, let script = script(for: words[0]) else {
            Output.standardError("ifmeter: usage: ifmeter completions bash|zsh|fish\n")
            return ExitCode.usage.rawValue
        }
        Output.standardOutput(script)
        return 0
    }

    public static func script(for shell: String) -> String? {
        switch shell {
        case "bash": bash()
        case "zsh": zsh()
        case "fish": fish()
        default: nil
        }
    }

    /// Single-quoted for any POSIX-like shell and fish alike.
    static func quoted(_ text: String) -> String {
        "'" + text.replacingAll("'", with: #"'\''"#) + "'"
    }

    static let interfaceList = "ls /sys/class/net 2>/dev/null"

    // MARK: bash

    static func bash() -> String {
        let table = CommandTable.self
        let globals = table.globals.flatMap(\.names).joined(separator: " ")
        var script = """
            # bash completion for ifmeter, generated by `ifmeter completions bash`
            _ifmeter() {
                local cur=${COMP_WORDS[COMP_CWORD]} prev=
                (( COMP_CWORD > 0 )) && prev=${COMP_WORDS[COMP_CWORD-1]}
                local command= word i=1
                # The command is the first word that is neither an option nor an option's value.
                while (( i < COMP_CWORD )); do
                    word=${COMP_WORDS[i]}
                    case $word in
                        \(table.valued.map(\.name).joined(separator: "|"))) (( i += 2 )); continue ;;
                        -*) ;;
                        *) command=$word; break ;;
                    esac
                    (( i++ ))
                done
                case $prev in

            """
        for (name, value) in table.valued {
            let reply: String
            switch value {
            case .file: reply = #"COMPREPLY=( $(compgen -f -- "$cur") )"#
            case .directory: reply = #"COMPREPLY=( $(compgen -d -- "$cur") )"#
            case .interface: reply = #"COMPREPLY=( $(compgen -W "$(\#(interfaceList))" -- "$cur") )"#
            case .choice(let choices): reply = #"COMPREPLY=( $(compgen -W "\#(choices.joined(separator: " "))" -- "$cur") )"#
            case .seconds, .count, .date, .none: reply = "COMPREPLY=()"
            }
            script += "        \(name)) \(reply); return ;;\n"
        }
        script += """
                esac
                local options= operands=
                case $command in
                    '') COMPREPLY=( $(compgen -W "\(table.commands.map(\.name).joined(separator: " ")) \(globals) \(table.leading.flatMap(\.names).joined(separator: " "))" -- "$cur") ); return ;;

            """
        for command in table.commands {
            let operands = command.interfaceOperands ? "operands=$(\(interfaceList))" : "operands="
            script += "        \(command.name)) options=\(quoted(command.options.flatMap(\.names).joined(separator: " "))); \(operands) ;;\n"
        }
        script += """
                    *) return ;;
                esac
                if [[ $cur == -* ]]; then
                    COMPREPLY=( $(compgen -W "$options \(globals)" -- "$cur") )
                else
                    COMPREPLY=( $(compgen -W "$operands" -- "$cur") )
                fi
            }
            complete -F _ifmeter ifmeter

            """
        return script
    }

    // MARK: zsh

    static func zshSpecs(_ option: CommandTable.Option) -> [String] {
        let action: String
        switch option.value {
        case .none: action = ""
        case .file: action = ":file:_files"
        case .directory: action = ":directory:_files -/"
        case .interface: action = ":interface:_ifmeter_interfaces"
        case .seconds: action = ":seconds: "
        case .count: action = ":number: "
        case .date: action = ":date (YYYY-MM-DD): "
        case .choice(let choices): action = ":\(option.names.last!.drop { $0 == "-" }):(\(choices.joined(separator: " ")))"
        }
        let summary = option.summary.replacingAll("[", with: "(").replacingAll("]", with: ")").replacingAll(":", with: " ")
        return option.names.map { quoted((option.repeatable ? "*" : "") + "\($0)[\(summary)]\(action)") }
    }

    static func zsh() -> String {
        let table = CommandTable.self
        var script = """
            #compdef ifmeter
            # zsh completion for ifmeter, generated by `ifmeter completions zsh`

            _ifmeter_interfaces() {
                local -a names
                names=( /sys/class/net/*(N:t) )
                _describe -t interfaces interface names
            }

            _ifmeter() {
                local curcontext=$curcontext state line
                local -a globals commands
                globals=(
                    \(table.globals.flatMap(zshSpecs).joined(separator: "\n        "))
                )
                commands=(
                    \(table.commands.map { quoted("\($0.name):\($0.summary)") }.joined(separator: "\n        "))
                )
                _arguments -C $globals \(table.leading.flatMap(zshSpecs).joined(separator: " ")) '1:command:->command' '*::argument:->argument'
                case $state in
                    command) _describe -t commands 'ifmeter command' commands ;;
                    argument)
                        case $words[1] in

            """
        for command in table.commands {
            var specs = ["$globals"] + command.options.flatMap(zshSpecs)
            if command.interfaceOperands { specs.append(quoted("*:interface:_ifmeter_interfaces")) }
            script += "                \(command.name)) _arguments \(specs.joined(separator: " ")) ;;\n"
        }
        script += """
                        esac ;;
                esac
            }

            _ifmeter "$@"

            """
        return script
    }

    // MARK: fish

    static func fish() -> String {
        let table = CommandTable.self
        let names = table.commands.map(\.name).joined(separator: " ")
        var script = """
            # fish completion for ifmeter, generated by `ifmeter completions fish`
            complete -c ifmeter -f

            """
        func line(_ option: CommandTable.Option, condition: String?) -> String {
            var words = ["complete -c ifmeter"]
            if let condition { words.append("-n \(quoted(condition))") }
            for name in option.names {
                words.append(name.hasPrefix("--") ? "-l \(name.dropFirst(2))" : "-s \(name.dropFirst())")
            }
            switch option.value {
            case .none: break
            case .file: words.append("-r -F")
            case .directory: words.append("-x -a '(__fish_complete_directories (commandline -ct))'")
            case .interface: words.append("-x -a '(\(interfaceList))'")
            case .seconds, .count, .date: words.append("-x")
            case .choice(let choices): words.append("-x -a \(quoted(choices.joined(separator: " ")))")
            }
            words.append("-d \(quoted(option.summary))")
            return words.joined(separator: " ") + "\n"
        }
        let noCommand = "not __fish_seen_subcommand_from \(names)"
        for command in table.commands {
            script += "complete -c ifmeter -n \(quoted(noCommand)) -a \(command.name) -d \(quoted(command.summary))\n"
        }
        for option in table.leading { script += line(option, condition: "test (count (commandline -opc)) -eq 1") }
        for option in table.globals { script += line(option, condition: nil) }
        for command in table.commands {
            let condition = "__fish_seen_subcommand_from \(command.name)"
            for option in command.options { script += line(option, condition: condition) }
            if command.interfaceOperands {
                script += "complete -c ifmeter -n \(quoted(condition)) -a '(\(interfaceList))' -d interface\n"
            }
        }
        return script
    }
}

fileprivate extension String {
    func replacingAll(_ target: Character, with replacement: String) -> String {
        var result = ""
        for character in self { if character == target { result += replacement } else { result.append(character) } }
        return result
    }
}
