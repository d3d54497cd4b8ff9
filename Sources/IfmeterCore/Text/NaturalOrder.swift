/// Names in the order people count: vpnx2 before vpnx10.
package enum NaturalOrder {
    package static func less(_ a: String, _ b: String) -> Bool {
        var left = Substring(a), right = Substring(b)
        while let x = left.first, let y = right.first {
            if x.isASCII && x.isNumber && y.isASCII && y.isNumber {
                let leftDigits = left.prefix { $0.isASCII && $0.isNumber }, rightDigits = right.prefix { $0.isASCII && $0.isNumber }
                let l = leftDigits.drop { $0 == "0" }, r = rightDigits.drop { $0 == "0" }
                if l.count != r.count { return l.count < r.count }
                if l != r { return l < r }
                if leftDigits.count != rightDigits.count { return leftDigits.count < rightDigits.count }
                left = left.dropFirst(leftDigits.count)
                right = right.dropFirst(rightDigits.count)
            } else {
                if x != y { return x < y }
                left = left.dropFirst()
                right = right.dropFirst()
            }
        }
        return left.isEmpty && !right.isEmpty
    }

    package static func sorted(_ names: [String]) -> [String] { names.sorted(by: less) }
}
