/// Runs a PAMStack as libpam's dispatcher does for pam_authenticate (a fresh, not frozen chain):
/// an impression (undecided, positive, negative) and a status combined line by line, `done` and
/// `die` ending the current level, jumps counting a substack as one module, and a stack that
/// ends undecided failing. A module that may answer more than one code (pam_succeed_if) makes
/// the run branch, so the result is every way the stack can end.
package struct PAMStackRun: Sendable {
    /// One module the run called and what it answered.
    package struct Step: Sendable {
        package let line: PAMModuleLine
        package let code: PAMCode
        package var action: PAMAction { line.control.action(for: code) }
    }
    package let granted: Bool
    package let steps: [Step]

    /// Branches explored at most; a stack with more is cut short (no real pam.d file comes near).
    static let maxRuns = 4096

    private struct State {
        var impression = 0  // 0 undecided, 1 positive, -1 negative (libpam's _PAM_UNDEF, ...)
        var status = PAMCode.permDenied
        var saved: [Int: (impression: Int, status: PAMCode)] = [0: (0, .permDenied)]
        var previousLevel = 0
        var steps: [Step] = []
    }

    /// Every way `stack` can end when each module answers one of `answers(line)`.
    package static func all(_ stack: PAMStack, answers: (PAMModuleLine) -> [PAMCode]) -> [PAMStackRun] {
        var runs: [PAMStackRun] = []
        var pending: [(index: Int, state: State, forced: PAMCode?)] = [(0, State(), nil)]
        let elements = stack.elements
        while let (start, initial, forcedFirst) = pending.popLast(), runs.count < maxRuns {
            var state = initial, index = start, forced = forcedFirst
            while index < elements.count {
                let (element, level) = elements[index]
                if state.previousLevel < level { state.saved[level] = (state.impression, state.status) }
                state.previousLevel = level
                let code: PAMCode
                switch element {
                case .substack:
                    index += 1
                    continue
                case .broken:
                    code = .permDenied
                case .module(let line):
                    if let f = forced { code = f; forced = nil } else {
                        let possible = answers(line)
                        code = possible.first ?? .permDenied
                        for other in possible.dropFirst() { pending.append((index, state, other)) }
                    }
                    state.steps.append(Step(line: line, code: code))
                }
                let action: PAMAction = if case .module(let line) = element { line.control.action(for: code) } else { .bad }
                var decided = false
                switch action {
                case .reset:
                    let s = state.saved[level] ?? (0, .permDenied)
                    state.impression = s.impression
                    state.status = s.status
                case .ok, .done:
                    if state.impression == 0 || (state.impression == 1 && state.status == .success) {
                        state.impression = 1
                        state.status = code
                    }
                    decided = state.impression == 1 && action == .done
                case .bad, .die:
                    if state.impression != -1 {
                        state.impression = -1
                        state.status = code == .ignore ? .permDenied : code
                    }
                    decided = action == .die
                case .ignore:
                    break
                case .jump(var n):
                    // Skip n modules of this level, each with whatever lies below it.
                    while index + 1 < elements.count && elements[index + 1].level >= level && n > 0 {
                        repeat { index += 1 } while index + 1 < elements.count && elements[index + 1].level > level
                        n -= 1
                    }
                    if n > 0 {  // a jump past the end: libpam logs "bad jump in stack" and fails
                        state.impression = -1
                        state.status = .permDenied
                    }
                }
                if decided {
                    while index + 1 < elements.count && elements[index + 1].level >= level { index += 1 }
                }
                index += 1
            }
            runs.append(PAMStackRun(granted: state.status == .success && state.impression == 1, steps: state.steps))
        }
        return runs
    }
}
