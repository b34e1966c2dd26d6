/// A G2 point with its Miller-loop lines computed once: pairings with a fixed Q (the
/// generator, a server's secret) then do no G2 arithmetic, only the line evaluations at P and
/// the Fp12 products. The lines are exactly those `Pairing.millerLoop` computes, so the results
/// are bit-identical.
///
/// The lines of a secret point are as secret as the point; they are computed with the same
/// fixed sequence of operations and read in a fixed order.
public struct PreparedG2: Sendable {
    /// The lines in loop order (one or two per loop digit, then two); empty for infinity.
    let lines: [Pairing.LineCoefficients]

    /// Computes the lines of `q` (about the G2 work of one Miller loop).
    public init(_ q: G2Point) {
        guard let (qx, qy) = q.affine else { self.init(lines: []); return }
        self.init(affineX: qx, y: qy)
    }

    /// The lines of the point (qx, qy), given affine.
    init(affineX qx: Fp2, y qy: Fp2) {
        var a = G2Point(affineX: qx, y: qy)
        var lines: [Pairing.LineCoefficients] = []
        lines.reserveCapacity(Pairing.loopDigits.count * 2 + 2)
        for digit in Pairing.loopDigits {
            lines.append(Pairing.doublingStep(&a))
            if digit == 1 {
                lines.append(Pairing.additionStep(&a, x2: qx, y2: qy))
            } else if digit == -1 {
                lines.append(Pairing.additionStep(&a, x2: qx, y2: -qy))
            }
        }
        let (first, second) = Pairing.finalSteps(&a, qx: qx, qy: qy)
        lines.append(first)
        lines.append(second)
        self.lines = lines
    }

    /// The point at infinity's: no lines (its pairings are 1).
    static let infinity = PreparedG2(lines: [])

    private init(lines: [Pairing.LineCoefficients]) { self.lines = lines }

    /// The G2 generator, prepared.
    public static let generator = PreparedG2(.generator)
}

extension Pairing {
    /// e(Q1, P1) · e(Q2, P2) for prepared Q1, Q2: equal to `doublePairing` on the points.
    public static func doublePairing(prepared q1: PreparedG2, _ p1: G1Point, prepared q2: PreparedG2, _ p2: G1Point) -> Fp12 {
        finalExponentiation(millerLoop(prepared: [(q1, p1), (q2, p2)]))
    }

    /// e(Q, P) for a prepared Q.
    public static func pairing(prepared q: PreparedG2, _ p: G1Point) -> Fp12 {
        finalExponentiation(millerLoop(prepared: [(q, p)]))
    }

    /// `millerLoop` with every pair's lines read from its table. The points P are made affine
    /// with one inversion for all of them.
    static func millerLoop(prepared pairs: [(PreparedG2, G1Point)]) -> Fp12 {
        let affine = G1Point.affine(of: pairs.map { $0.1 })
        return millerLoop(prepared: pairs.indices.map { (pairs[$0].0, affine[$0]) })
    }

    /// `millerLoop(prepared:)` with the points P already affine (nil for infinity).
    static func millerLoop(prepared pairs: [(PreparedG2, (x: Fp, y: Fp)?)]) -> Fp12 {
        var states: [(lines: [LineCoefficients], px: Fp, py: Fp)] = []
        for (q, p) in pairs {
            guard !q.lines.isEmpty, let (px, py) = p else { continue }
            states.append((q.lines, px, py))
        }
        if states.isEmpty { return .one }

        var f = Fp12.one
        var index = 0
        for (position, digit) in loopDigits.enumerated() {
            if position > 0 { f = f.squared } // 1² = 1
            for s in states {
                f = f.multipliedBySparse(s.lines[index].at(s.px, s.py))
                if digit != 0 { f = f.multipliedBySparse(s.lines[index + 1].at(s.px, s.py)) }
            }
            index += digit != 0 ? 2 : 1
        }
        f = f.conjugate
        for s in states {
            f = f.multipliedBySparse(s.lines[index].at(s.px, s.py))
            f = f.multipliedBySparse(s.lines[index + 1].at(s.px, s.py))
        }
        return f
    }
}
