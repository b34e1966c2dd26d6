// The reference side of `make bench-mcl` (Tests/Bench/mcl-bench.sh): the operations mpin-bench
// times, done by mcl (github.com/herumi/mcl, built from its public sources in a temporary
// directory; never kept in this repository) on the same curve, BN254CX.
//
// mcl takes a user-defined BN curve as a CurveParam: the BN parameter u, b of y^2 = x^3 + b,
// xi = xi_a + i and the twist type. BN254CX is u = -0x4000000003C012B1, b = 2, xi = 1 + i,
// D-type twist (docs/CRYPTO.md §1); the curve type number is one mcl does not know, so that
// none of its presets for its own BN254 (u = -(2^62 + 2^55 + 1)) applies. The program checks
// that mcl's p is BN254CX's and that the pairing is bilinear before it times anything.
//
// Output: one line per operation, "NAME MICROSECONDS", the median over rounds of batches,
// as mpin-bench prints them. Names as mpin-bench's: g1_mul (mulCT by a random scalar, then
// the affine form, as mpin-bench's g1_mul ends in an encoding), g2_mul_point (mulCT of a
// point of G2 that is not the generator, then affine), pairing, double_pairing.
#include <mcl/bn.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <ctime>
#include <vector>

using namespace mcl::bn;

// Wall time, or this thread's CPU time with MPIN_BENCH_CLOCK=cpu (as mpin-bench).
static clockid_t benchClock() {
    const char *c = std::getenv("MPIN_BENCH_CLOCK");
    return c && std::strcmp(c, "cpu") == 0 ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC;
}

static double nowMicros() {
    static const clockid_t clock = benchClock();
    timespec ts;
    clock_gettime(clock, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int sink = 0;

template <class F>
static void measure(const char *name, int batch, F body) {
    const int rounds = 7;
    std::vector<double> samples;
    body(); // warm-up
    for (int r = 0; r < rounds; r++) {
        double start = nowMicros();
        for (int i = 0; i < batch; i++) body();
        samples.push_back((nowMicros() - start) / batch);
    }
    std::sort(samples.begin(), samples.end());
    std::printf("%s %d\n", name, (int)(samples[rounds / 2] + 0.5));
}

static bool wanted(int argc, char **argv, const char *name) {
    if (argc < 2) return true;
    for (int i = 1; i < argc; i++) if (std::strcmp(argv[i], name) == 0) return true;
    return false;
}

int main(int argc, char **argv) {
    const mcl::CurveParam bn254cx("-0x4000000003C012B1", 2, 1, false, 50);
    initPairing(bn254cx);
    // BN254CX's p (docs/CRYPTO.md §1: 0x2400000008702a0d...5c1b55b3), in decimal as mcl prints it.
    const std::string expectedP = "16283262549886230019726996094938013714788842227227418772989111988905620231603";
    if (Fp::getModulo() != expectedP) {
        std::fprintf(stderr, "mcl-bench: mcl's p is %s, not BN254CX's\n", Fp::getModulo().c_str());
        return 1;
    }
    G1 P;
    G2 Q, Q2;
    hashAndMapToG1(P, "mpin-bench P", 12);
    hashAndMapToG2(Q, "mpin-bench Q", 12);
    hashAndMapToG2(Q2, "mpin-bench Q2", 13);
    Fr k;
    k.setByCSPRNG();

    // Bilinearity: e(kP, Q) = e(P, kQ).
    Fp12 e1, e2;
    G1 kP;
    G2 kQ;
    G1::mulCT(kP, P, k);
    G2::mulCT(kQ, Q, k);
    pairing(e1, kP, Q);
    pairing(e2, P, kQ);
    if (e1 != e2 || e1.isOne()) {
        std::fprintf(stderr, "mcl-bench: the pairing is not bilinear on this curve\n");
        return 1;
    }

    if (wanted(argc, argv, "g1_mul")) measure("g1_mul", 50, [&] {
        G1 r;
        G1::mulCT(r, P, k);
        r.normalize();
        sink += r.x.getUnit()[0] & 1;
    });
    if (wanted(argc, argv, "g2_mul_point")) measure("g2_mul_point", 20, [&] {
        G2 r;
        G2::mulCT(r, Q2, k);
        r.normalize();
        sink += r.x.a.getUnit()[0] & 1;
    });
    if (wanted(argc, argv, "pairing")) measure("pairing", 10, [&] {
        Fp12 e;
        pairing(e, P, Q);
        sink += e.a.a.a.getUnit()[0] & 1;
    });
    if (wanted(argc, argv, "double_pairing")) measure("double_pairing", 10, [&] {
        const G1 ps[2] = { P, kP };
        const G2 qs[2] = { Q, Q2 };
        Fp12 f, e;
        millerLoopVec(f, ps, qs, 2);
        finalExp(e, f);
        sink += e.a.a.a.getUnit()[0] & 1;
    });
    if (sink == 42) std::printf("\n");
    return 0;
}
