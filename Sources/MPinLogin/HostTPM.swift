import CTPMShim
import MPinCrypto

/// The host's TPM 2.0, through CTPMShim (tpm2-tss loaded on first use): a sealed object per user
/// whose authorisation value comes from the PIN (OfflineKey), under a primary key the TPM derives
/// again each time from its storage hierarchy. docs/SECURITY.md, "Offline logins", says what it
/// protects against and what not.
package final class HostTPM {
    /// Why a TPM operation did not give what was asked. Never carries a secret.
    package enum Failure: Error, Equatable, Sendable, CustomStringConvertible {
        /// No tpm2-tss, no such device or socket, no TPM answering.
        case unavailable(String)
        /// The authorisation value is wrong: the TPM counted a failure.
        case wrongAuthorisation
        /// The TPM is in dictionary-attack lockout and tries nothing.
        case lockout
        /// The object was not made by this TPM (or was changed): it does not load.
        case foreign(String)
        case failed(String)

        package var description: String {
            switch self {
            case .unavailable(let why): "no usable TPM: \(why)"
            case .wrongAuthorisation: "wrong PIN (the TPM refused the authorisation)"
            case .lockout: "the TPM is in dictionary-attack lockout"
            case .foreign(let why): "the offline record does not belong to this host's TPM (\(why))"
            case .failed(let why): "TPM error: \(why)"
            }
        }
    }

    /// The TPM's dictionary-attack counters (TPM2_GetCapability), for `mpinctl doctor`.
    package struct LockoutState: Equatable, Sendable {
        package var failedTries: UInt32
        package var maxTries: UInt32
        package var recoverySeconds: UInt32
        package var inLockout: Bool
    }

    private let handle: OpaquePointer

    /// Connects to the TPM `tcti` names (`device:/dev/tpmrm0`, `swtpm:host=127.0.0.1,port=N`).
    package init(tcti: String) throws(Failure) {
        var why = [CChar](repeating: 0, count: 256)
        var tpm: OpaquePointer? = nil
        let rc = mpin_tpm_open(tcti, &tpm, &why, why.count)
        guard rc == Int32(MPIN_TPM_OK), let tpm else { throw Self.failure(rc, why) }
        handle = tpm
    }

    deinit { mpin_tpm_close(handle) }

    /// Seals `secret` under `auth`; the object's marshalled public and private parts.
    package func seal(auth: borrowing SecretBytes, secret: borrowing SecretBytes) throws(Failure) -> (public: [UInt8], private: [UInt8]) {
        var pub = [UInt8](repeating: 0, count: Int(MPIN_TPM_BLOB_MAX))
        var priv = [UInt8](repeating: 0, count: Int(MPIN_TPM_BLOB_MAX))
        var pubLength = 0, privLength = 0
        var why = [CChar](repeating: 0, count: 256)
        let rc = auth.withUnsafeBytes { a in
            secret.withUnsafeBytes { s in
                mpin_tpm_seal(handle, a.baseAddress?.assumingMemoryBound(to: UInt8.self), a.count,
                              s.baseAddress?.assumingMemoryBound(to: UInt8.self), s.count,
                              &pub, &pubLength, &priv, &privLength, &why, why.count)
            }
        }
        guard rc == Int32(MPIN_TPM_OK) else { throw Self.failure(rc, why) }
        return (Array(pub[..<pubLength]), Array(priv[..<privLength]))
    }

    /// The secret sealed in the object, if `auth` is its authorisation value.
    package func unseal(auth: borrowing SecretBytes, public pub: [UInt8], private priv: [UInt8]) throws(Failure) -> SecretBytes {
        var out = [UInt8](repeating: 0, count: Int(MPIN_TPM_SECRET_MAX))
        var outLength = 0
        var why = [CChar](repeating: 0, count: 256)
        let rc = auth.withUnsafeBytes { a in
            mpin_tpm_unseal(handle, a.baseAddress?.assumingMemoryBound(to: UInt8.self), a.count,
                            pub, pub.count, priv, priv.count, &out, &outLength, &why, why.count)
        }
        guard rc == Int32(MPIN_TPM_OK) else {
            out.wipe()
            throw Self.failure(rc, why)
        }
        var taken = Array(out[..<outLength])
        out.wipe()
        return SecretBytes(taking: &taken)
    }

    package func lockoutState() throws(Failure) -> LockoutState {
        var failed: UInt32 = 0, maxTries: UInt32 = 0, interval: UInt32 = 0
        var inLockout: Int32 = 0
        var why = [CChar](repeating: 0, count: 256)
        let rc = mpin_tpm_lockout_state(handle, &failed, &maxTries, &interval, &inLockout, &why, why.count)
        guard rc == Int32(MPIN_TPM_OK) else { throw Self.failure(rc, why) }
        return LockoutState(failedTries: failed, maxTries: maxTries, recoverySeconds: interval, inLockout: inLockout != 0)
    }

    private static func failure(_ rc: Int32, _ why: [CChar]) -> Failure {
        let text = String(decoding: why.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        switch rc {
        case Int32(MPIN_TPM_UNAVAILABLE): return .unavailable(text)
        case Int32(MPIN_TPM_BAD_AUTH): return .wrongAuthorisation
        case Int32(MPIN_TPM_LOCKOUT): return .lockout
        case Int32(MPIN_TPM_FOREIGN): return .foreign(text)
        default: return .failed(text)
        }
    }
}
