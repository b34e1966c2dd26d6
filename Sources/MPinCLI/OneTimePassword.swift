import MPinClient
import MPinCrypto

/// Authenticates `user` with the PIN `readPIN` returns (asked only once the backend has
/// answered the first pass) and prints the backend's one-time password with its lifetime:
/// `mpinctl otp` and `mpin otp`.
package func printOneTimePassword(_ sdk: MPinSDK, _ user: MPinUser, readPIN: () throws -> SecretBytes) throws {
    try check(sdk.startAuthentication(user))
    let pin = try readPIN()
    let (status, otp) = sdk.finishAuthenticationOTP(user, pin: pin)
    try check(status)
    try check(otp.status)
    print("\(otp.otp) (valid for \(otp.ttlSeconds) s)")
}
