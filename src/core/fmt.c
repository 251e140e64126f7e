/* fmt.c - "%.12g" without printf (see fmt.h).
 *
 * %.12g rounds v to 12 significant digits, then prints them in fixed
 * notation when the decimal exponent X of the rounded value is in [-4, 12),
 * else as d.ddde±XX, with trailing zeros (and a bare point) removed.
 *
 * The digits: for 1e-10 <= |v| < 1e15 there is a k in [-4, 22] with
 * s = |v| * 10^k in [1e11, 1e12). 10^k is exact in a double (5^22 < 2^53), so
 * s carries one rounding error of at most 2^-53 relative, under 1.2e-4 in
 * absolute terms; the integer part of s is exact. Whenever the fraction of s
 * is more than 1e-3 away from one half, rounding s to an integer therefore
 * rounds the exact decimal value of v the same way glibc does (it rounds
 * the exact value, ties to even). The rare near-ties go to snprintf, so the
 * result is exact by construction.
 */
#include "core/fmt.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static const double p10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                               1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

static size_t slow(char *out, double v)
{
    int n = snprintf(out, SY_FMT_G12_MAX, "%.12g", v);
    return n > 0 ? (size_t)n : 0;
}

static double scale(double a, int k)
{
    return k >= 0 ? a * p10[k] : a / p10[-k];
}

size_t sy_fmt_g12(char *out, double v)
{
    double a = fabs(v);
    if (!(a >= 1e-10 && a < 1e15)) {
        if (a == 0) { /* "0", "-0" */
            size_t o = 0;
            if (signbit(v))
                out[o++] = '-';
            out[o++] = '0';
            out[o] = 0;
            return o;
        }
        return slow(out, v);
    }
    uint64_t bits;
    memcpy(&bits, &a, sizeof bits);
    int e2 = (int)(bits >> 52) - 1023;
    int k = 11 - (e2 * 1233 >> 12); /* 1233/4096 ~ log10(2): one off at most */
    if (k > 22 || k < -22)
        return slow(out, v);
    double s = scale(a, k);
    if (s >= 1e12 || s < 1e11) {
        k += s >= 1e12 ? -1 : 1;
        if (k > 22 || k < -22)
            return slow(out, v);
        s = scale(a, k);
    }
    uint64_t d = (uint64_t)s;
    double f = s - (double)d;
    if (f > 0.499 && f < 0.501)
        return slow(out, v);
    if (f > 0.5)
        d++;
    if (d == 1000000000000u) {
        d = 100000000000u;
        k--;
    }
    if (d < 100000000000u || d >= 1000000000000u)
        return slow(out, v);

    char dg[12];
    for (int i = 11; i >= 0; i--) {
        dg[i] = (char)('0' + d % 10);
        d /= 10;
    }
    int nd = 12;
    while (nd > 1 && dg[nd - 1] == '0')
        nd--;
    int x = 11 - k; /* decimal exponent of the first digit */
    size_t o = 0;
    if (v < 0)
        out[o++] = '-';
    if (x < -4 || x >= 12) {
        out[o++] = dg[0];
        if (nd > 1) {
            out[o++] = '.';
            memcpy(out + o, dg + 1, (size_t)nd - 1);
            o += (size_t)nd - 1;
        }
        out[o++] = 'e';
        out[o++] = x < 0 ? '-' : '+';
        int ax = x < 0 ? -x : x; /* < 100 here */
        out[o++] = (char)('0' + ax / 10);
        out[o++] = (char)('0' + ax % 10);
    } else if (x >= 0) {
        memcpy(out + o, dg, (size_t)x + 1);
        o += (size_t)x + 1;
        if (nd > x + 1) {
            out[o++] = '.';
            memcpy(out + o, dg + x + 1, (size_t)(nd - x - 1));
            o += (size_t)(nd - x - 1);
        }
    } else {
        out[o++] = '0';
        out[o++] = '.';
        for (int i = -1; i > x; i--)
            out[o++] = '0';
        memcpy(out + o, dg, (size_t)nd);
        o += (size_t)nd;
    }
    out[o] = 0;
    return o;
}
