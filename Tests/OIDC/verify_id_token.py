#!/usr/bin/python3
"""Verifies an ID token of mpin-server's OpenID provider the way an independent relying party
would: with Debian's python3-jwcrypto, from the provider's discovery document and JWKS only.

usage: verify_id_token.py ISSUER CLIENT_ID NONCE [ALG] < id_token
ALG (RS256, the default, or ES256) is the algorithm the client was registered with: a token
signed with any other is refused, whatever its header says.
Prints the verified subject as `sub=...` and exits 0; exits 1 with the reason on stderr for
any failure (signature, key, issuer, audience, expiry, nonce). Run by OIDCFlowTests.
"""
import json
import sys
import time
import urllib.request

from jwcrypto import jwk, jws, jwt


def fetch(url):
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.load(response)


def main():
    issuer, client_id, nonce = sys.argv[1:4]
    alg = sys.argv[4] if len(sys.argv) > 4 else "RS256"
    token = sys.stdin.read().strip()
    discovery = fetch(issuer.rstrip("/") + "/.well-known/openid-configuration")
    if discovery.get("issuer") != issuer:
        raise ValueError("discovery names issuer %r" % discovery.get("issuer"))
    # OIDC Discovery §3: RS256 must be announced; the client's own algorithm too.
    announced = discovery.get("id_token_signing_alg_values_supported", [])
    for needed in {"RS256", alg}:
        if needed not in announced:
            raise ValueError("the provider does not announce %s" % needed)
    keys = jwk.JWKSet.from_json(json.dumps(fetch(discovery["jwks_uri"])))
    # The header names the key; only the client's algorithm is accepted, whatever the token says.
    verified = jwt.JWT(jwt=token, key=keys, algs=[alg], check_claims={
        "iss": issuer, "aud": client_id, "exp": None, "nonce": nonce})
    claims = json.loads(verified.claims)
    now = time.time()
    if not claims["iat"] <= now + 60:
        raise ValueError("issued in the future")
    if claims.get("amr") != ["mpin"]:
        raise ValueError("amr is %r" % claims.get("amr"))
    print("sub=" + claims["sub"])


if __name__ == "__main__":
    try:
        main()
    except (ValueError, KeyError, jws.InvalidJWSSignature, jws.InvalidJWSObject, jwt.JWTExpired,
            jwt.JWTMissingClaim, jwt.JWTInvalidClaimValue, jwt.JWTMissingKey, Exception) as e:
        print("invalid: %s: %s" % (type(e).__name__, e), file=sys.stderr)
        sys.exit(1)
