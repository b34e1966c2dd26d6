/// A G2 point with its Miller-loop lines computed once: pairings with a fixed Q (the
/// generator, a server's secret) then do no G2 arithmetic, only the line evaluations at P and
/// the Fp12 products. The lines are those `Pairing.millerLoop` computes, divided by factors in
/// Fp2 when normalised (`init(_:)`), which the final exponentiation removes, so the results are
/// bit-identical.
///
/// The lines of a secret point are as secret as the point; they are computed with the same
/// fixed sequence of operations and read in a fixed order.
package struct PreparedG2: Sendable {
    /// The lines in loop order (one or two per loop digit, then two); empty for infinity.
    /// When `normalized`, each is divided by its c0 (which is then 1, and c3, c1 the quotients).
    let lines: [Pairing.LineCoefficients]
    /// Whether the lines are divided by their c0 (`init(_:)`), or as computed (`init(oneShot:)`).
    let normalized: Bool

    /// Computes the lines of `q` for many pairings (about the G2 work of one Miller loop, and
    /// one simultaneous inversion): each line c0·yP + c1·xP·t + c3·t³ is divided by c0, and at
    /// pairing time by yP, to 1 + (c1/c0)(xP/yP)·t + (c3/c0)(1/yP)·t³. Both factors lie in Fp2,
    /// which the final exponentiation maps to 1, so the pairings are the same; a line with 1 for
    /// its t⁰ coefficient makes two of the three Fp4 products of the sparse product by a line
    /// two Fp2 products each (`Fp12.multipliedByNormalizedSparse`). The c0 are never 0 for a
    /// point of order r (2YZ with Y, Z ≠ 0; X − Z·x2 with A ≠ ±B).
    package init(_ q: G2Point) {
        let plain = PreparedG2(oneShot: q)
        guard !plain.lines.isEmpty else { self = plain; return }
        let inverses = Fp2.simultaneousInverses(plain.lines.map(\.c0))
        self.init(lines: plain.lines.indices.map { i in
            Pairing.LineCoefficients(c0: .one, c3: plain.lines[i].c3 * inverses[i], c1: plain.lines[i].c1 * inverses[i])
        }, normalized: true)
    }

    /// The lines of `q` as computed, for a pairing or two: normalising costs more than it
    /// saves in one.
    init(oneShot q: G2Point) {
        guard let (qx, qy) = q.affine else { self.init(lines: [], normalized: false); return }
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
        self.init(lines: lines, normalized: false)
    }

    /// The point at infinity's: no lines (its pairings are 1).
    static let infinity = PreparedG2(lines: [], normalized: false)

    private init(lines: [Pairing.LineCoefficients], normalized: Bool) {
        self.lines = lines
        self.normalized = normalized
    }

    /// The G2 generator, prepared.
    package static let generator = PreparedG2(.generator)
}

extension Pairing {
    /// e(Q1, P1) · e(Q2, P2) for prepared Q1, Q2: equal to `doublePairing` on the points.
    package static func doublePairing(prepared q1: PreparedG2, _ p1: G1Point, prepared q2: PreparedG2, _ p2: G1Point) -> Fp12 {
        finalExponentiation(millerLoop(prepared: [(q1, p1), (q2, p2)]))
    }

    /// e(Q, P) for a prepared Q.
    package static func pairing(prepared q: PreparedG2, _ p: G1Point) -> Fp12 {
        finalExponentiation(millerLoop(prepared: [(q, p)]))
    }

    /// `millerLoop` with every pair's lines read from its table. The points P are made affine
    /// with one inversion for all of them.
    /// For normalised lines P enters as (xP/yP, 1/yP) = (X/Y, Z/Y), for the others as
    /// (X/Z, Y/Z): one simultaneous inversion of Y or Z (1 for a point at infinity, by mask)
    /// for all. yP ≠ 0 for P ≠ O, G1 having no point of order 2.
    static func millerLoop(prepared pairs: [(PreparedG2, G1Point)]) -> Fp12 {
        let denominators = pairs.map { q, p in Fp.select(p.isInfinityMask, .one, q.normalized ? p.y : p.z) }
        let inverses = Fp.simultaneousInverses(denominators)
        return millerLoop(prepared: pairs.indices.map { i -> (PreparedG2, (x: Fp, y: Fp)?) in
            let (q, p) = pairs[i]
            if p.isInfinity { return (q, nil) }
            return (q, q.normalized ? (p.x * inverses[i], p.z * inverses[i]) : (p.x * inverses[i], p.y * inverses[i]))
        })
    }

    /// `millerLoop(prepared:)` with the points P already in the form their lines take (nil for
    /// infinity): affine, or (xP/yP, 1/yP) for normalised lines.
    static func millerLoop(prepared pairs: [(PreparedG2, (x: Fp, y: Fp)?)]) -> Fp12 {
        var states: [(lines: [LineCoefficients], px: Fp, py: Fp, normalized: Bool)] = []
        for (q, p) in pairs {
            guard !q.lines.isEmpty, let (px, py) = p else { continue }
            states.append((q.lines, px, py, q.normalized))
        }
        if states.isEmpty { return .one }
        /// f times the line of state `s` at `index` (whether it is normalised is public).
        @inline(__always) func times(_ f: Fp12, _ s: (lines: [LineCoefficients], px: Fp, py: Fp, normalized: Bool),
                                     _ index: Int) -> Fp12 {
            let c = s.lines[index]
            if s.normalized {
                return f.multipliedByNormalizedSparse(l3: c.c3.scaled(by: s.py), l1: c.c1.scaled(by: s.px))
            }
            return f.multipliedBySparse(c.at(s.px, s.py))
        }

        var f = Fp12.one
        var index = 0
        for (position, digit) in loopDigits.enumerated() {
            if position > 0 { f = f.squared } // 1² = 1
            for s in states {
                f = times(f, s, index)
                if digit != 0 { f = times(f, s, index + 1) }
            }
            index += digit != 0 ? 2 : 1
        }
        f = f.conjugate
        for s in states {
            f = times(f, s, index)
            f = times(f, s, index + 1)
        }
        return f
    }
}
