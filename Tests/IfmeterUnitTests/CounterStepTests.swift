import IfmeterTestSupport
import Testing
@testable import IfmeterCore

@Suite struct CounterStepTests {
    static let cases: [(previous: UInt64, current: UInt64, width: CounterWidth, expected: CounterStep)] = [
        (100, 150, .bits64, .forward(50)),
        (100, 100, .bits64, .forward(0)),
        // 64-bit sources never wrap in practice: any drop is a reset.
        (5_000_000_000, 10, .bits64, .reset(10)),
        (UInt64(UInt32.max) - 5, 10, .bits64, .reset(10)),
        // 32-bit wrap: both fit in 32 bits and the drop exceeds 2^31.
        (UInt64(UInt32.max) - 5, 10, .bits32, .wrapped(16)),
        (3_000_000_000, 1_000, .bits32, .wrapped(1_000 + (1 << 32) - 3_000_000_000)),
        // A drop of at most 2^31 is a reset, even on a 32-bit source.
        (2_000_000_000, 1_000, .bits32, .reset(1_000)),
        (1 << 31, 0, .bits32, .reset(0)),
        // A previous value past 32 bits cannot have come from a 32-bit counter.
        (5_000_000_000, 10, .bits32, .reset(10)),
    ]

    @Test(arguments: cases)
    func judgesEachCounter(_ testCase: (previous: UInt64, current: UInt64, width: CounterWidth, expected: CounterStep)) {
        #expect(CounterStep.between(testCase.previous, testCase.current, width: testCase.width) == testCase.expected)
    }
}
