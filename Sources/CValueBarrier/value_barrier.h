/* A value barrier for MPinCrypto's constant-time code (docs/CRYPTO.md §11). Header only;
 * nothing to link.
 *
 * The masks the crypto selects with (all-ones or zero, derived from a secret bit or a borrow)
 * are ordinary integers to the optimiser, which may notice that one can only be 0 or -1 and
 * turn `b ^ (mask & (a ^ b))` back into a branch on the secret. Passing the mask through an
 * empty asm statement that claims to read and rewrite it ("+r") hides where it came from: the
 * compiler must assume any 64-bit value comes out, so only the masked arithmetic stays
 * correct. The statement emits no instruction; it only pins the value in a register. */
#ifndef MPIN_VALUE_BARRIER_H
#define MPIN_VALUE_BARRIER_H

#include <stdint.h>

static inline __attribute__((always_inline)) uint64_t mpin_value_barrier(uint64_t x) {
    __asm__("" : "+r"(x));
    return x;
}

/* Four 64-bit limbs, the layout of MPinCrypto's UInt256 (least significant first). */
typedef struct {
    uint64_t w0, w1, w2, w3;
} mpin_limbs4;

/* v − m when v ≥ m, else v: the final conditional subtraction of every modular addition and
 * Montgomery multiplication, where the choice depends on secret values. On x86-64 one asm
 * statement subtracts with borrow and takes v back with cmovc (no branch; cmov's timing does
 * not depend on the condition), as the compiler itself compiled it before the barrier, but out
 * of the optimiser's reach (v in registers: letting the compiler pass it from memory made a
 * pairing 6 % slower). Elsewhere: the borrow becomes a mask that passes the value barrier, then
 * masking. */
static inline __attribute__((always_inline)) mpin_limbs4 mpin_subtract_if_fits4(mpin_limbs4 v, mpin_limbs4 m) {
#if defined(__x86_64__)
    mpin_limbs4 r = v;
    __asm__("sub %[m0], %[r0]\n\t"
            "sbb %[m1], %[r1]\n\t"
            "sbb %[m2], %[r2]\n\t"
            "sbb %[m3], %[r3]\n\t"
            "cmovc %[v0], %[r0]\n\t"
            "cmovc %[v1], %[r1]\n\t"
            "cmovc %[v2], %[r2]\n\t"
            "cmovc %[v3], %[r3]"
            : [r0] "+&r"(r.w0), [r1] "+&r"(r.w1), [r2] "+&r"(r.w2), [r3] "+&r"(r.w3)
            : [m0] "rm"(m.w0), [m1] "rm"(m.w1), [m2] "rm"(m.w2), [m3] "rm"(m.w3),
              [v0] "r"(v.w0), [v1] "r"(v.w1), [v2] "r"(v.w2), [v3] "r"(v.w3)
            : "cc");
    return r;
#else
    unsigned long long b0, b1, b2, b3;
    mpin_limbs4 d;
    d.w0 = __builtin_subcll(v.w0, m.w0, 0, &b0);
    d.w1 = __builtin_subcll(v.w1, m.w1, b0, &b1);
    d.w2 = __builtin_subcll(v.w2, m.w2, b1, &b2);
    d.w3 = __builtin_subcll(v.w3, m.w3, b2, &b3);
    uint64_t keep = mpin_value_barrier(0 - (uint64_t)b3); /* all-ones when v < m */
    mpin_limbs4 r = { d.w0 ^ (keep & (v.w0 ^ d.w0)), d.w1 ^ (keep & (v.w1 ^ d.w1)),
                      d.w2 ^ (keep & (v.w2 ^ d.w2)), d.w3 ^ (keep & (v.w3 ^ d.w3)) };
    return r;
#endif
}

#endif
