/// Compares a frame with a reference the way the brief defines a match: pixels whose reference
/// alpha is 0 match any colour; partially transparent pixels may differ by `partialTolerance`
/// per channel; all others by `tolerance` (0 = exact).
struct PixelComparison {
    var differing = 0
    var maxDifference = 0
    var firstDifference: (x: Int, y: Int, ours: [UInt8], reference: [UInt8])? = nil

    init(ours: [UInt8], reference: [UInt8], width: Int, tolerance: Int, partialTolerance: Int) {
        precondition(ours.count == reference.count)
        var p = 0
        while p < reference.count {
            let alpha = reference[p + 3]
            let limit = alpha == 255 ? tolerance : max(tolerance, partialTolerance)
            var worst = abs(Int(ours[p + 3]) - Int(alpha))
            if alpha != 0 {
                for c in 0..<3 { worst = max(worst, abs(Int(ours[p + c]) - Int(reference[p + c]))) }
            }
            if worst > limit {
                differing += 1
                maxDifference = max(maxDifference, worst)
                if firstDifference == nil {
                    let pixel = p / 4
                    firstDifference = (pixel % width, pixel / width, Array(ours[p..<p + 4]), Array(reference[p..<p + 4]))
                }
            }
            p += 4
        }
    }

    var matches: Bool { differing == 0 }

    var summary: String {
        guard let first = firstDifference else { return "match" }
        return
            "\(differing) pixels differ (max \(maxDifference)); first at (\(first.x),\(first.y)): ours \(first.ours), reference \(first.reference)"
    }
}
