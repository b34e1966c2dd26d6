/// Problems with the data directory or the stored keys, raised at start-up and by `init`.
public enum SetupError: Error, Sendable, Equatable, CustomStringConvertible {
    case dataDirectoryExists(String)
    case missingFile(String)
    case corruptFile(String)
    case insecurePermissions(String)
    case io(String)
    /// A config.json value outside its range (file, key).
    case invalidSetting(String, String)

    public var description: String {
        switch self {
        case .dataDirectoryExists(let p): return "data directory already initialised: \(p)"
        case .missingFile(let p): return "missing file: \(p)"
        case .corruptFile(let p): return "unreadable or corrupt file: \(p)"
        case .insecurePermissions(let p): return "file is readable by other users: \(p)"
        case .invalidSetting(let p, let key): return "\(p): \(key) is out of range"
        case .io(let m): return "I/O error: \(m)"
        }
    }
}
