internal import MPinCrypto
internal import MPinJSON
internal import MPinWire

/// The two storage documents of PROTOCOL.md §3.9:
/// non-secure `users`: `{backendKey: {mpinIdHex: {"state": …, "deviceName": …,
/// "customerId": …, "appId": …}}}` (the last two only for users of the MFA flavour; entries
/// without them load as users without a customer);
/// secure `tokens`: `{mpinIdHex: {"regOTT": hex}}` while registering, `{"token": hex}` after.
extension MPinSDK {
    static let usersDocument = "users"
    static let secretsDocument = "tokens"

    func loadUsers() -> MPinStatus {
        let usersJSON: JSONValue
        let secrets: JSONValue
        do {
            usersJSON = try readDocument(context_.nonSecureStorage, Self.usersDocument)
            secrets = try readDocument(context_.secureStorage, Self.secretsDocument)
        } catch let status {
            return status
        }
        guard case .object(let backends) = usersJSON else { return MPinStatus(.storageError, "the user list is not a JSON object") }
        var loaded: [MPinUser] = []
        for (backendKey, entries) in backends {
            guard case .object(let ids) = entries else { return MPinStatus(.storageError, "bad user list for \(backendKey)") }
            for (mpinIdHex, entry) in ids {
                guard let mpinId = Hex.decode(mpinIdHex), let identity = MPinIdentity.parse(mpinId),
                      let state = MPinUserState(rawValue: entry["state"]?.stringValue ?? ""), state != .invalid else {
                    return MPinStatus(.storageError, "a stored user on \(backendKey) is malformed")
                }
                let user = MPinUser(id: identity.userID, deviceName: entry["deviceName"]?.stringValue ?? "")
                user.state = state
                user.mpinIdHex = mpinIdHex.lowercased()
                user.backendKey = backendKey
                user.customerId = entry["customerId"]?.stringValue ?? ""
                user.appId = entry["appId"]?.stringValue ?? ""
                user.verdictKeyHex = entry["verdictKey"]?.stringValue ?? ""
                // A signing key counts only with its token (written first, §14.2).
                if let signing = entry["signingMpinId"]?.stringValue, let pa = entry["signingPublicKey"]?.stringValue,
                   secrets[Self.signingTokenKey(user.mpinIdHex)]?["token"]?.stringValue != nil {
                    user.signingMpinIdHex = signing
                    user.signingPublicKeyHex = pa
                }
                let secret = secrets[user.mpinIdHex]
                let regOTT = secret?["regOTT"]?.stringValue ?? ""
                switch state {
                case .startedRegistration, .activated:
                    // The secure document is written first: a token with a user list still
                    // saying "registering" is a FinishRegistration whose second write was lost.
                    if regOTT.isEmpty, secret?["token"]?.stringValue != nil {
                        user.state = .registered
                        break
                    }
                    guard !regOTT.isEmpty else { return MPinStatus(.storageError, "user \(user.key) is registering but has no regOTT") }
                    user.regOTT = regOTT
                case .registered:
                    guard regOTT.isEmpty else { return MPinStatus(.storageError, "registered user \(user.key) still has a regOTT") }
                default: break
                }
                loaded.append(user)
            }
        }
        users = loaded
        return .ok
    }

    func readDocument(_ storage: any Storage, _ name: String) throws(MPinStatus) -> JSONValue {
        var bytes: [UInt8] = []
        do { bytes = try storage.read(name) ?? [] } catch { throw MPinStatus(.storageError, error.description) }
        // The secure document's text holds every token: wipe the raw copy once it is parsed
        // (one variable, no second reference, so the wipe reaches the buffer that was read).
        defer { bytes.wipe() }
        guard !bytes.isEmpty else { return .object([]) }
        guard let v = try? JSONParser().parse(bytes), case .object = v else {
            throw MPinStatus(.storageError, "the stored \(name) document is not valid JSON")
        }
        return v
    }

    /// The secure document's key of a user's signing token: apart from the authentication
    /// token, so that each is read, replaced and wiped on its own (docs/MFA.md §14.2).
    static func signingTokenKey(_ mpinIdHex: String) -> String { "dvs-" + mpinIdHex }

    /// Rewrites the user list; with `secretFor`, also sets (or removes, for nil) that user's
    /// entry in the secure document, and removes the entries named in `alsoRemoving`.
    func saveUsers(secretFor mpinIdHex: String? = nil, secret: JSONValue? = nil, alsoRemoving: [String] = []) -> MPinStatus {
        var byBackend: [(String, JSONValue)] = []
        for key in users.map(\.backendKey).reduce(into: [String](), { if !$0.contains($1) { $0.append($1) } }) {
            let entries: [(key: String, value: JSONValue)] = users.filter { $0.backendKey == key }.map { u in
                var fields: [(key: String, value: JSONValue)] = [("state", .string(u.state.rawValue))]
                if !u.deviceName.isEmpty { fields.append(("deviceName", .string(u.deviceName))) }
                if !u.customerId.isEmpty { fields.append(("customerId", .string(u.customerId))) }
                if !u.appId.isEmpty { fields.append(("appId", .string(u.appId))) }
                if !u.verdictKeyHex.isEmpty { fields.append(("verdictKey", .string(u.verdictKeyHex))) }
                if u.canSign {
                    fields.append(("signingMpinId", .string(u.signingMpinIdHex)))
                    fields.append(("signingPublicKey", .string(u.signingPublicKeyHex)))
                }
                return (u.mpinIdHex, .object(fields))
            }
            byBackend.append((key, .object(entries)))
        }
        do {
            if let mpinIdHex {
                var doc = try readDocument(context_.secureStorage, Self.secretsDocument)
                guard case .object(var members) = doc else { return MPinStatus(.storageError, "bad secure document") }
                members.removeAll { $0.key == mpinIdHex || alsoRemoving.contains($0.key) }
                if let secret { members.append((mpinIdHex, secret)) }
                doc = .object(members)
                try context_.secureStorage.write(Self.secretsDocument, doc.serialized)
            }
            try context_.nonSecureStorage.write(Self.usersDocument, JSONValue.object(byBackend.map { ($0.0, $0.1) }).serialized)
        } catch let status as MPinStatus {
            return status
        } catch let error as StorageError {
            return MPinStatus(.storageError, error.description)
        } catch {
            return MPinStatus(.storageError, "\(error)")
        }
        return .ok
    }

    /// Rewrites the user list without the user's secrets: its token or regOTT and its signing token.
    func saveUsers(removingSecretOf mpinIdHex: String) -> MPinStatus {
        mpinIdHex.isEmpty ? saveUsers()
            : saveUsers(secretFor: mpinIdHex, secret: nil, alsoRemoving: [Self.signingTokenKey(mpinIdHex)])
    }

    /// The stored token of a registered user.
    func storedToken(_ user: MPinUser) throws(MPinStatus) -> SecretBytes {
        try storedSecretToken(key: user.mpinIdHex, user: user)
    }

    /// The stored signing token of a user who can sign.
    func storedSigningToken(_ user: MPinUser) throws(MPinStatus) -> SecretBytes {
        try storedSecretToken(key: Self.signingTokenKey(user.mpinIdHex), user: user)
    }

    private func storedSecretToken(key: String, user: MPinUser) throws(MPinStatus) -> SecretBytes {
        let doc = try readDocument(context_.secureStorage, Self.secretsDocument)
        guard let hex = doc[key]?["token"]?.stringValue, var token = Hex.decode(hex) else {
            throw MPinStatus(.cryptoError, "no token is stored for \(user.key)")
        }
        return SecretBytes(taking: &token)
    }
}

extension MPinStatus: Error {}
