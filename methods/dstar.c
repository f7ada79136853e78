/* Discrete gradient methods on D* (Celledoni et al. 2019, Sects. 2.2.1, 3.2, 3.3): the step (14)
 *   (zeta' - zeta)/h = Pi(zeta_bar) grad_bar H(zeta, zeta'),   zeta = (q, rho), zeta_bar = midpoint,
 * with Pi = [[0, X], [-X^T, -C rho]] (eq. 8), H(q, rho) = 1/2 rho^T g^-1 rho + V(q), g = X^T M X, and
 * C_ab^c rho_c = p^T [X_a, X_b] with p = M X g^-1 rho (eq. 17). Pi is skew, so H is conserved exactly
 * for any discrete gradient; q' - q = h X(q_bar) (...) keeps A(q_bar)(q' - q) = 0 and the output
 * velocity v' = X(q') g^-1 rho' lies in D_q' exactly (Remark 3.3).
 *   avf        mean-value discrete gradient (11) by Gauss-Legendre quadrature (`nodes` points: exact
 *              when grad H is a polynomial of degree <= 2 nodes - 1 along the segment)
 *   gonzalez   midpoint discrete gradient (12)
 *   itoh-abe   coordinate-increment discrete gradient (13) (not symmetric: order 1)
 * These use the system's analytic adapted basis. gonzalez-r (Sect. 3.3) computes the basis and its
 * derivatives by Householder QR with derivatives (Algorithm 1, signs fixed within a step), or with
 * fd=1 the derivatives by central differences of half-width h/2 (our reading of Remark 3.5, whose
 * formula is cut from the seed: O(h^2)-consistent, order 2 kept); it therefore serves every system.
 * The Newton matrix is analytic for avf, gonzalez, itoh-abe and gonzalez-r on constant-mass systems
 * (dstar_jacobian.c, built at each step's guess) and otherwise a forward-difference Jacobian of the
 * residual kept across steps; the converged residual is at round-off either way. */
#include "common.h"
#include "discrete_gradient.h"
#include "dstar_internal.h"
#include "dstar_field.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static long doubles_for(size_t bytes)
{
    return (long)((bytes + sizeof(double) - 1) / sizeof(double));
}

static long pattern_doubles(long size)
{
    return doubles_for(sizeof(pattern_header) + (size_t)size * (sizeof(pattern_entry) + sizeof(uint64_t)));
}

static void pattern_layout(double *base, int size, pattern *p)
{
    p->size = size;
    p->head = (pattern_header *)base;
    p->listed = (uint64_t *)(p->head + 1);
    p->entry = (pattern_entry *)(p->listed + size);
}

static long qr_doubles(void)
{
    return doubles_for(nh_qr_work_bytes());
}

/* The next `count` doubles of the block at base (NULL: only count them). */
static double *take(double *base, long *used, long count)
{
    double *p = base ? base + *used : NULL;
    *used += count;
    return p;
}

/* Carve `base` into the arrays of w, with a basis cache when `cached` (a QR basis); returns the doubles
 * used (with base NULL: the size to allocate). */
static long dstar_work_layout(double *base, int n, int m, int cached, dstar_work *w)
{
    const long r = n - m, dim = 2L * n - m;
    long used = 0;
    w->x = take(base, &used, n * r);
    w->dx = take(base, &used, n * r * n);
    w->xp = take(base, &used, n * r);
    w->xm = take(base, &used, n * r);
    w->mass = take(base, &used, n * n);
    w->mx = take(base, &used, n * r);
    w->g = take(base, &used, r * r);
    w->g_blocks = take(base, &used, r * r);
    w->blocks = (metric_blocks *)take(base, &used, doubles_for(sizeof(metric_blocks)));
    w->metric_terms = (metric_term *)take(base, &used, doubles_for((size_t)(n * r * (r + 1) / 2) * sizeof(metric_term)));
    w->pairs = (structure_pairs *)take(base, &used, doubles_for(sizeof(structure_pairs)));
    w->dm = take(base, &used, (long)n * n * n);
    w->d = take(base, &used, r * r);
    w->fd = take(base, &used, NH_FD_WORK(dim));
    w->u = take(base, &used, n * n);
    w->s = take(base, &used, n * r);
    w->ydot = take(base, &used, n * r);
    w->pdot = take(base, &used, n * n);
    w->x_shift = take(base, &used, n * r);
    w->dx_shift = take(base, &used, n * r * n);
    w->dd = take(base, &used, n * r * n);
    w->hqq = take(base, &used, n * n);
    w->ginv = take(base, &used, r * r);
    w->hess = take(base, &used, dim * dim);
    w->dgrad = take(base, &used, dim * dim);
    w->jpi = take(base, &used, dim * dim);
    w->grads = take(base, &used, n * dim);
    w->dmetric = take(base, &used, r * r);
    double *x_nz = take(base, &used, pattern_doubles(n * r)), *dx_nz = take(base, &used, pattern_doubles(n * r * n));
    if (base) {
        pattern_layout(x_nz, (int)(n * r), &w->x_nz);
        pattern_layout(dx_nz, (int)(n * r * n), &w->dx_nz);
    }
    w->qr = (nh_qr_work *)take(base, &used, qr_doubles());
    w->ends.count = w->ends.next = 0;
    for (int k = 0; k < END_POINT_SLOTS; ++k) {
        w->ends.z1[k] = take(base, &used, dim);
        w->ends.v[k] = take(base, &used, n);
    }
    w->cache.count = w->cache.next = 0;
    for (int k = 0; k < BASIS_CACHE_SLOTS && cached; ++k) {
        w->cache.q[k] = take(base, &used, n);
        w->cache.x[k] = take(base, &used, n * r);
        w->cache.dx[k] = take(base, &used, n * r * n);
    }
    return used;
}

static long dstar_work_doubles(int n, int m, int cached)
{
    dstar_work unused;
    return dstar_work_layout(NULL, n, m, cached, &unused);
}

/* ---- frame, Hamiltonian, gradient, Pi --------------------------------------------------------- */

int nh_dstar_basis_at(const dstar_step *c, const double *q, double *x, double *dx)
{
    const nh_system *s = c->sys;
    const int n = s->n, r = c->r;
    nh_qr_work *qr = c->w->qr;
    switch (c->method->basis) {
    case BASIS_SYSTEM:
        s->type->adapted_basis(s, q, x, dx ? dx : c->w->dx);
        return 0;
    case BASIS_QR:
        return nh_qr_kernel_basis(s, q, (double *)c->signs, 0, x, dx, qr);
    case BASIS_QR_FD:
        break;
    }
    if (nh_qr_kernel_basis(s, q, (double *)c->signs, 0, x, NULL, qr))
        return 1;
    if (!dx)
        return 0;
    /* Remark 3.5: a gradient consistent to O(h^r) keeps order r, so the derivative may be a central
     * difference with half-width h/2 (error O(h^2)). A tiny difference step would instead make the
     * residual a rough function of the unknowns (rounding / step) and stall Newton above round-off. */
    double qp[N], *xp = c->w->xp, *xm = c->w->xm;
    memcpy(qp, q, (size_t)n * sizeof *q);
    for (int j = 0; j < n; ++j) {
        const double d = 0.5 * fabs(c->h);
        qp[j] = q[j] + d;
        if (nh_qr_kernel_basis(s, qp, (double *)c->signs, 0, xp, NULL, qr))
            return 1;
        qp[j] = q[j] - d;
        if (nh_qr_kernel_basis(s, qp, (double *)c->signs, 0, xm, NULL, qr))
            return 1;
        qp[j] = q[j];
        for (int k = 0; k < n * r; ++k)
            dx[k * n + j] = (xp[k] - xm[k]) / (2 * d);
    }
    return 0;
}

/* The entry list of p from its listed positions, in ascending order. */
static void pattern_list(pattern *p, int n, int r, int derivative)
{
    p->head->count = 0;
    for (int k = 0; k < p->size; ++k) {
        if (!p->listed[k])
            continue;
        const int row = k / n;   /* dX: k = (j r + a) n + i; X: k = i r + a */
        p->entry[p->head->count++] = derivative ? (pattern_entry){row / r, row % r, k % n, k}
                                                : (pattern_entry){0, k % r, k / r, k};
    }
}

/* Grow p to cover the nonzeros of a (rare: only when one appears outside it). */
static void pattern_grow(pattern *p, const double *a, int n, int r, int derivative)
{
    for (int k = 0; k < p->size; ++k)
        if (a[k] != 0.0)
            p->listed[k] = ~(uint64_t)0;
    pattern_list(p, n, r, derivative);
}

static void pattern_declare(pattern *p, const unsigned char *mask, int n, int r, int derivative)
{
    for (int k = 0; k < p->size; ++k)
        p->listed[k] = mask[k] ? ~(uint64_t)0 : 0;
    pattern_list(p, n, r, derivative);
    p->head->declared = 1;
}

/* Make p cover the nonzeros of a: one pass ORing the bits of the unlisted entries (sign bits aside). */
static int pattern_cover(pattern *p, const double *a, int n, int r, int derivative)
{
    uint64_t outside = 0;
    for (int k = 0; k < p->size; ++k) {
        uint64_t bits;
        memcpy(&bits, a + k, sizeof bits);
        outside |= bits & ~p->listed[k];
    }
    if (!(outside << 1))
        return 0;
    pattern_grow(p, a, n, r, derivative);
    return 1;
}

static int block_root(int *parent, int a)
{
    while (parent[a] != a)
        a = parent[a] = parent[parent[a]];
    return a;
}

/* The metric terms of X's listed pattern and the blocks' slots (constant diagonal M; none otherwise, when
 * g is formed densely). Entries of one row are contiguous and ascending in a. */
static void list_metric_terms(const dstar_step *c)
{
    const pattern *x = &c->w->x_nz;
    metric_blocks *b = c->w->blocks;
    int offset[N], local[N], width[N];   /* per column: its block's offset in g_blocks, size, and its place */
    b->factor_size = 0;
    for (int k = 0; k < b->count; ++k) {
        const int size = b->start[k + 1] - b->start[k];
        for (int i = 0; i < size; ++i) {
            const int a = b->column[b->start[k] + i];
            offset[a] = b->factor_size;
            width[a] = size;
            local[a] = i;
        }
        b->factor_size += size * size;
    }
    b->term_count = 0;
    if (nh_has_variable_mass(c->sys))
        return;
    int row_start = 0;
    for (int e = 0; e < x->head->count; ++e) {
        const pattern_entry *left = x->entry + e;
        if (x->entry[row_start].i != left->i)
            row_start = e;
        for (int f = row_start; f <= e; ++f)
            c->w->metric_terms[b->term_count++] =
                (metric_term){c->sys->mass[left->i], left->k, x->entry[f].k,
                              offset[left->a] + local[left->a] * width[left->a] + local[x->entry[f].a]};
    }
}

/* metric_blocks from X's listed pattern: the columns listed in one row of X join one block (all columns
 * when M varies with q and couples every row). */
static void find_metric_blocks(const dstar_step *c)
{
    const int r = c->r, all = nh_has_variable_mass(c->sys);
    const pattern *x = &c->w->x_nz;
    metric_blocks *b = c->w->blocks;
    int parent[N], label[N], size[N + 1] = {0};
    for (int a = 0; a < r; ++a)
        parent[a] = all ? 0 : a;
    for (int e = 1; e < x->head->count; ++e)
        if (x->entry[e].i == x->entry[e - 1].i)   /* listed in ascending position: rows are contiguous */
            parent[block_root(parent, x->entry[e].a)] = block_root(parent, x->entry[e - 1].a);
    b->count = 0;
    b->start[0] = 0;
    for (int a = 0; a < r; ++a)
        label[a] = -1;
    for (int a = 0; a < r; ++a) {
        const int root = block_root(parent, a);
        if (label[root] < 0)
            label[root] = b->count++;
        size[label[root] + 1]++;
    }
    for (int k = 0; k < b->count; ++k)
        b->start[k + 1] = b->start[k] + size[k + 1];
    int filled[N] = {0};
    for (int a = 0; a < r; ++a) {
        const int k = label[block_root(parent, a)];
        b->column[b->start[k] + filled[k]++] = a;
    }
    list_metric_terms(c);
}

/* w->pairs from X's and dX's listed patterns (structure_pairs). */
static void list_structure_pairs(const dstar_step *c)
{
    const int r = c->r, reduced = nh_is_reduced(c->sys);
    const pattern *x = &c->w->x_nz, *dx = &c->w->dx_nz;
    unsigned char linked[N * N];
    memset(linked, reduced, sizeof linked);
    for (int e = 0; e < dx->head->count && !reduced; ++e)
        for (int f = 0; f < x->head->count; ++f)
            if (x->entry[f].i == dx->entry[e].i) {
                linked[dx->entry[e].a * r + x->entry[f].a] = 1;
                linked[x->entry[f].a * r + dx->entry[e].a] = 1;
            }
    structure_pairs *pairs = c->w->pairs;
    for (int i = 0, e = 0; i <= c->sys->n; ++i) {   /* X's entries are listed row by row */
        while (e < x->head->count && x->entry[e].i < i)
            ++e;
        pairs->x_row[i] = e;
    }
    pairs->start[0] = 0;
    pairs->lower_count = 0;
    for (int a = 0; a < r; ++a) {
        int count = pairs->start[a];
        for (int b = 0; b < r; ++b)
            if (b != a && linked[a * r + b]) {
                pairs->column[count++] = b;
                if (b < a) {
                    pairs->lower[pairs->lower_count] = a * r + b;
                    pairs->upper[pairs->lower_count++] = b * r + a;
                }
            }
        pairs->start[a + 1] = count;
    }
}

/* After X's or dX's listed pattern changed: g's blocks and d's pairs. */
static void patterns_changed(const dstar_step *c)
{
    find_metric_blocks(c);
    list_structure_pairs(c);
}

/* The slot a ring of `slots` entries (the basis cache, the end points) overwrites next: the oldest once
 * all are filled. */
static int next_ring_slot(int *next, int *count, int slots)
{
    const int k = *next;
    *next = (k + 1) % slots;
    *count += *count < slots;
    return k;
}

/* Keep the basis in w->x (and w->dx when with_dx) at q in the next slot of the step's cache. */
static int cache_store(const dstar_step *c, const double *q, int with_dx)
{
    basis_cache *cache = &c->w->cache;
    const size_t n = (size_t)c->sys->n, x_size = n * (size_t)c->r;
    const int k = next_ring_slot(&cache->next, &cache->count, BASIS_CACHE_SLOTS);
    memcpy(cache->q[k], q, n * sizeof *q);
    memcpy(cache->x[k], c->w->x, x_size * sizeof *q);
    if (with_dx)
        memcpy(cache->dx[k], c->w->dx, x_size * n * sizeof *q);
    cache->with_dx[k] = with_dx;
    cache->covered_x[k] = cache->covered_dx[k] = 0;
    return k;
}

/* The basis at q into w->x (and w->dx when with_dx): for a QR basis from the step's cache when it holds
 * q (with dX if asked), else computed and kept. *slot: the cache slot holding it (-1: not cached). The
 * QR is a function of q and the step's signs only, so a cached basis has the bits of a computed one. */
static inline __attribute__((always_inline)) int frame_basis(const dstar_step *c, const double *q, int with_dx,
                                                              int *slot)
{
    dstar_work *w = c->w;
    const size_t n = (size_t)c->sys->n, x_size = n * (size_t)c->r;
    *slot = -1;
    if (c->method->basis == BASIS_SYSTEM)
        return nh_dstar_basis_at(c, q, w->x, with_dx ? w->dx : NULL);
    for (int k = 0; k < w->cache.count; ++k)
        if ((w->cache.with_dx[k] || !with_dx) && !memcmp(w->cache.q[k], q, n * sizeof *q)) {
            memcpy(w->x, w->cache.x[k], x_size * sizeof *q);
            if (with_dx)
                memcpy(w->dx, w->cache.dx[k], x_size * n * sizeof *q);
            *slot = k;
            return 0;
        }
    if (nh_dstar_basis_at(c, q, w->x, with_dx ? w->dx : NULL))
        return 1;
    *slot = cache_store(c, q, with_dx);
    return 0;
}

/* A frame's X (and dX) into the listed patterns, unless its cache slot was covered before (the patterns
 * only grow: a basis once covered stays covered). */
static void cover_patterns(const dstar_step *c, int with_dx, int slot)
{
    basis_cache *cache = &c->w->cache;
    const int n = c->sys->n;
    int changed = slot >= 0 && cache->covered_x[slot] ? 0 : pattern_cover(&c->w->x_nz, c->w->x, n, c->r, 0);
    if (with_dx && !(slot >= 0 && cache->covered_dx[slot]))
        changed |= pattern_cover(&c->w->dx_nz, c->w->dx, n, c->r, 1);
    if (changed)
        patterns_changed(c);
    if (slot >= 0) {
        cache->covered_x[slot] = 1;
        cache->covered_dx[slot] |= with_dx;
    }
}

/* y = g^-1 y, factoring the blocks of g held in w->g_blocks (1 if one is not SPD; nh_dstar_inverse_metric
 * reads the factors). A one-column block is the dense solve's arithmetic, y / d as y * (1 / d), so the
 * blocks do not change the bits. */
static inline __attribute__((always_inline)) int metric_solve(const dstar_step *c, double *y)
{
    const metric_blocks *b = c->w->blocks;
    double *factor = c->w->g_blocks, part[N];
    for (int k = 0; k < b->count; ++k) {
        const int size = b->start[k + 1] - b->start[k], *col = b->column + b->start[k];
        if (size == 1) {
            if (!(factor[0] > 0.0) || !isfinite(factor[0]))
                return 1;
            factor[0] = 1.0 / factor[0];
            y[col[0]] *= *factor++;
            continue;
        }
        for (int i = 0; i < size; ++i)
            part[i] = y[col[i]];
        if (nh_spd_solve(size, factor, part))
            return 1;
        for (int i = 0; i < size; ++i)
            y[col[i]] = part[i];
        factor += size * size;
    }
    return 0;
}

/* Before a workspace's first frame: the system's declared patterns of X and dX, listed once (the basis
 * arrays are still zero, as a basis with a declared pattern needs them off the pattern; the masks borrow
 * the shift arrays, cleared again after), and g's blocks (one per column while no pattern is listed, so
 * an X without nonzeros fails as not positive definite). */
static void prepare_patterns(const dstar_step *c)
{
    const nh_system *s = c->sys;
    dstar_work *w = c->w;
    const size_t x_size = (size_t)s->n * (size_t)c->r, dx_size = x_size * (size_t)s->n;
    if (!w->blocks->count)
        patterns_changed(c);
    if (c->method->basis != BASIS_SYSTEM || !s->type->adapted_basis_pattern || w->x_nz.head->declared)
        return;
    unsigned char *x_mask = (unsigned char *)w->x_shift, *dx_mask = (unsigned char *)w->dx_shift;
    memset(x_mask, 0, x_size);
    memset(dx_mask, 0, dx_size);
    s->type->adapted_basis_pattern(s, x_mask, dx_mask);
    pattern_declare(&w->x_nz, x_mask, s->n, c->r, 0);
    pattern_declare(&w->dx_nz, dx_mask, s->n, c->r, 1);
    patterns_changed(c);
    memset(w->x_shift, 0, x_size * sizeof *w->x_shift);
    memset(w->dx_shift, 0, dx_size * sizeof *w->dx_shift);
}

/* The blocks of g = X^T M X into w->g_blocks (their lower triangles, as the L D L^T solve reads them):
 * from the metric terms for a constant diagonal M; for M(q), g = X^T (M X) formed densely and gathered. */
static void metric_blocks_at(const dstar_step *c, const dstar_frame *f)
{
    const nh_system *s = c->sys;
    dstar_work *w = c->w;
    const double *x = w->x;
    double *restrict g_blocks = w->g_blocks;
    for (int e = 0; e < w->blocks->factor_size; ++e)   /* a loop, not memset: a few dozen entries */
        g_blocks[e] = 0.0;
    if (!nh_has_variable_mass(s)) {
        const metric_term *t = w->metric_terms;
        for (int e = 0; e < w->blocks->term_count; ++e)
            g_blocks[t[e].slot] += x[t[e].left] * (t[e].mass * x[t[e].right]);
        return;
    }
    const int n = s->n, r = c->r;
    const pattern_entry *entry = w->x_nz.entry;
    double *mx = w->mx, *g = w->g;
    s->type->mass_matrix(s, f->z, w->mass);
    memset(mx, 0, (size_t)n * r * sizeof *mx);
    for (int e = 0; e < f->x_count; ++e)
        for (int i = 0; i < n; ++i)
            mx[i * r + entry[e].a] += w->mass[i * n + entry[e].i] * x[entry[e].k];
    memset(g, 0, (size_t)r * r * sizeof *g);
    for (int e = 0; e < f->x_count; ++e)
        for (int b = 0; b <= entry[e].a; ++b)
            g[entry[e].a * r + b] += x[entry[e].k] * mx[entry[e].i * r + b];
    const int *col = w->blocks->column;   /* M(q): one block of all r columns, in order */
    for (int i = 0; i < r; ++i)
        for (int j = 0; j <= i; ++j)
            w->g_blocks[i * r + j] = g[col[i] * r + col[j]];
}

void nh_dstar_basis_times(const dstar_step *c, const dstar_frame *f, const double *restrict y, double *restrict out)
{
    const pattern_entry *x = c->w->x_nz.entry;
    const double *restrict values = c->w->x;
    for (int i = 0; i < c->sys->n; ++i)
        out[i] = 0.0;
    for (int e = 0; e < f->x_count; ++e)
        out[x[e].i] += values[x[e].k] * y[x[e].a];
}

void nh_dstar_inverse_metric(const dstar_step *c, double *ginv)
{
    const metric_blocks *b = c->w->blocks;
    const int r = c->r;
    const double *factor = c->w->g_blocks;
    double block[N * N];
    memset(ginv, 0, (size_t)r * r * sizeof *ginv);
    for (int k = 0; k < b->count; ++k) {
        const int size = b->start[k + 1] - b->start[k], *col = b->column + b->start[k];
        if (size == 1) {   /* metric_solve left 1 / g_aa */
            ginv[col[0] * r + col[0]] = factor[0];
            factor += 1;
            continue;
        }
        nh_spd_inverse_factored(size, factor, block);
        for (int i = 0; i < size; ++i)
            for (int j = 0; j < size; ++j)
                ginv[col[i] * r + col[j]] = block[j * size + i];
        factor += size * size;
    }
}

int nh_dstar_frame_at(const dstar_step *c, const double *z, int with_dx, dstar_frame *f)
{
    const nh_system *s = c->sys;
    const int n = s->n;
    int slot;
    if (frame_basis(c, z, with_dx, &slot))
        return 1;
    f->z = z;
    if (!c->w->x_nz.head->declared)
        cover_patterns(c, with_dx, slot);
    f->x_count = c->w->x_nz.head->count;
    f->dx_count = with_dx ? c->w->dx_nz.head->count : 0;
    metric_blocks_at(c, f);
    for (int a = 0; a < c->r; ++a)
        f->y[a] = z[n + a];
    if (metric_solve(c, f->y))
        return 1;
    nh_dstar_basis_times(c, f, f->y, f->v);
    if (nh_has_variable_mass(s))
        nh_matvec(n, n, c->w->mass, f->v, f->p);
    else
        for (int i = 0; i < n; ++i)
            f->p[i] = s->mass[i] * f->v[i];
    return 0;
}

double nh_dstar_frame_energy(const dstar_step *c, const dstar_frame *f)
{
    return 0.5 * nh_dot(c->r, f->z + c->sys->n, f->y) + c->sys->type->potential(c->sys, f->z);
}

/* grad H: dH/dq_i = -sum_{j,a} p_j y_a dX_a^j/dq_i - 1/2 v^T (dM/dq_i) v + dV/dq_i, dH/drho = y (a frame
 * with dX) */
void nh_dstar_frame_gradient(const dstar_step *c, const dstar_frame *f, double *grad)
{
    const nh_system *s = c->sys;
    const int n = s->n;
    const pattern_entry *dx = c->w->dx_nz.entry;
    const double *value = c->w->dx;
    s->type->potential_gradient(s, f->z, grad);
    for (int e = 0; e < f->dx_count; ++e)
        grad[dx[e].i] -= f->p[dx[e].j] * f->y[dx[e].a] * value[dx[e].k];
    if (nh_has_variable_mass(s)) {
        double *dm = c->w->dm;
        s->type->mass_matrix_derivative(s, f->z, dm);
        for (int j = 0; j < n; ++j)
            for (int i = 0; i < n; ++i)
                for (int k = 0; k < n; ++k)
                    grad[j] -= 0.5 * f->v[i] * dm[(i * n + k) * n + j] * f->v[k];
    }
    memcpy(grad + n, f->y, (size_t)c->r * sizeof *f->y);
}

/* d = D - D^T = -C rho in place (a - b is exactly -(b - a): the matrix is exactly skew) */
static void make_skew(int r, double *d)
{
    for (int a = 0; a < r; ++a) {
        for (int b = 0; b < a; ++b) {
            const double t = d[a * r + b] - d[b * r + a];
            d[a * r + b] = t;
            d[b * r + a] = -t;
        }
        d[a * r + a] -= d[a * r + a];
    }
}

/* -C rho = D - D^T with D_ab = sum_{j,i} p_j dX_a^j/dq_i X_b^i, at d's pairs (the entries Pi reads; its
 * diagonal and the entries off the pairs are left as they were). A reduced system (no configuration)
 * takes its brackets from the Lie algebra: -C rho = -p.[X_a, X_b], all of d. */
void nh_dstar_structure_matrix(const dstar_step *c, const dstar_frame *f, double *d)
{
    const nh_system *s = c->sys;
    const int n = s->n, r = c->r;
    const double *x = c->w->x;
    if (nh_is_reduced(s)) {
        double xa[N], xb[N], br[N];
        for (int a = 0; a < r; ++a)
            for (int b = 0; b < r; ++b) {
                for (int i = 0; i < n; ++i) {
                    xa[i] = x[i * r + a];
                    xb[i] = x[i * r + b];
                }
                s->type->lie_bracket(s, xa, xb, br);
                d[a * r + b] = -0.5 * nh_dot(n, f->p, br);   /* D - D^T doubles it */
            }
        make_skew(r, d);
        return;
    }
    const pattern_entry *dx = c->w->dx_nz.entry, *x_entry = c->w->x_nz.entry;
    const structure_pairs *pairs = c->w->pairs;
    for (int k = 0; k < pairs->lower_count; ++k)   /* D at d's pairs only: the rest of d is never read */
        d[pairs->lower[k]] = d[pairs->upper[k]] = 0.0;
    for (int e = 0; e < f->dx_count; ++e) {
        const int a = dx[e].a, i = dx[e].i;
        const double weight = f->p[dx[e].j] * c->w->dx[dx[e].k];
        for (int t = pairs->x_row[i]; t < pairs->x_row[i + 1]; ++t)
            if (x_entry[t].a != a)   /* D's diagonal cancels in d */
                d[a * r + x_entry[t].a] += weight * x[x_entry[t].k];
    }
    for (int k = 0; k < pairs->lower_count; ++k) {   /* make_skew at the pairs */
        const double t = d[pairs->lower[k]] - d[pairs->upper[k]];
        d[pairs->lower[k]] = t;
        d[pairs->upper[k]] = -t;
    }
}

/* out = Pi(z) G with d = D - D^T from nh_dstar_structure_matrix at the frame: out_q = X G_rho,
 * out_rho = -X^T G_q + d G_rho */
static inline __attribute__((always_inline)) void apply_pi(const dstar_step *c, const dstar_frame *f,
                                                           const double *restrict d, const double *restrict in,
                                                           const int cols, double *restrict out)
{
    const nh_system *s = c->sys;
    const int n = s->n, r = c->r, reduced = nh_is_reduced(s);
    const pattern_entry *x = c->w->x_nz.entry;
    const double *restrict in_rho = in + n * cols;
    double *restrict out_rho = out + n * cols, sum[Z];
    memset(out, 0, (size_t)(n + r) * cols * sizeof *out);
    for (int e = 0; e < f->x_count && !reduced; ++e) {   /* reduced: Pi = [[0, 0], [0, -C rho]], q stays */
        const double xe = c->w->x[x[e].k];
        for (int j = 0; j < cols; ++j) {
            out[x[e].i * cols + j] += xe * in_rho[x[e].a * cols + j];
            out_rho[x[e].a * cols + j] -= xe * in[x[e].i * cols + j];
        }
    }
    const structure_pairs *pairs = c->w->pairs;
    for (int a = 0; a < r; ++a) {
        for (int j = 0; j < cols; ++j)
            sum[j] = 0.0;
        for (int e = pairs->start[a]; e < pairs->start[a + 1]; ++e) {
            const int b = pairs->column[e];
            for (int j = 0; j < cols; ++j)
                sum[j] += d[a * r + b] * in_rho[b * cols + j];
        }
        for (int j = 0; j < cols; ++j)
            out_rho[a * cols + j] += sum[j];
    }
}

void nh_dstar_apply_pi(const dstar_step *c, const dstar_frame *f, const double *d, const double *grad, double *out)
{
    apply_pi(c, f, d, grad, 1, out);
}

void nh_dstar_apply_pi_columns(const dstar_step *c, const dstar_frame *f, const double *d, const double *in,
                               int cols, double *out)
{
    apply_pi(c, f, d, in, cols, out);
}

/* out = Pi(z) G (a frame with dX) */
static void frame_pi_times(const dstar_step *c, const dstar_frame *f, const double *grad, double *out)
{
    nh_dstar_structure_matrix(c, f, c->w->d);
    nh_dstar_apply_pi(c, f, c->w->d, grad, out);
}

int nh_dstar_hamiltonian_at(const dstar_step *c, const double *z, double *value)
{
    dstar_frame f;
    if (nh_dstar_frame_at(c, z, 0, &f))
        return 1;
    *value = nh_dstar_frame_energy(c, &f);
    return 0;
}

static int hamiltonian_gradient(const dstar_step *c, const double *z, double *grad)
{
    dstar_frame f;
    if (nh_dstar_frame_at(c, z, 1, &f))
        return 1;
    nh_dstar_frame_gradient(c, &f, grad);
    return 0;
}

static int pi_times(const dstar_step *c, const double *z, const double *grad, double *out)
{
    dstar_frame f;
    if (nh_dstar_frame_at(c, z, 1, &f))
        return 1;
    frame_pi_times(c, &f, grad, out);
    return 0;
}

/* ---- discrete gradients of H on R^{n+r} -------------------------------------------------------- */

/* Keep the velocity of the frame f at z1 for the step's end point (end_points) */
static void keep_end_point(const dstar_step *c, const double *z1, const dstar_frame *f)
{
    end_points *ends = &c->w->ends;
    const int k = next_ring_slot(&ends->next, &ends->count, END_POINT_SLOTS);
    memcpy(ends->z1[k], z1, (size_t)c->dim * sizeof *z1);
    memcpy(ends->v[k], f->v, (size_t)c->sys->n * sizeof *z1);
}

/* The velocity at the step's end point z1 (a frame without dX, or a kept one) */
static int end_velocity(const dstar_step *c, const double *z1, double *v)
{
    const end_points *ends = &c->w->ends;
    const size_t n = (size_t)c->sys->n;
    for (int k = 0; k < ends->count; ++k)
        if (!memcmp(ends->z1[k], z1, (size_t)c->dim * sizeof *z1)) {
            memcpy(v, ends->v[k], n * sizeof *v);
            return 0;
        }
    dstar_frame f;
    if (nh_dstar_frame_at(c, z1, 0, &f))
        return 1;
    memcpy(v, f.v, n * sizeof *v);
    return 0;
}

/* (12) at the midpoint frame f (which the residual reuses for Pi): grad H(mid) plus the correction
 * that makes it a discrete gradient. H(z1) is evaluated first, since the workspace holds one frame. */
static int gonzalez_gradient(const dstar_step *c, const double *z1, const double *mid, dstar_frame *f, double *out)
{
    double delta[Z], coef;
    for (int i = 0; i < c->dim; ++i)
        delta[i] = z1[i] - c->z0[i];
    if (nh_dstar_frame_at(c, z1, 0, f))
        return 1;
    const double h1 = nh_dstar_frame_energy(c, f);
    keep_end_point(c, z1, f);
    if (nh_dstar_frame_at(c, mid, 1, f))
        return 1;
    nh_dstar_frame_gradient(c, f, out);
    nh_gonzalez_correct(c->dim, c->energy0, h1, delta, nh_dot(c->dim, mid, mid), out, &coef);
    return 0;
}

static int avf_gradient(const dstar_step *c, const double *z1, double *out)
{
    double point[Z], g[Z];
    memset(out, 0, (size_t)c->dim * sizeof *out);
    for (int k = 0; k < c->method->nodes; ++k) {
        for (int i = 0; i < c->dim; ++i)
            point[i] = c->z0[i] + c->method->node[k] * (z1[i] - c->z0[i]);
        if (hamiltonian_gradient(c, point, g))
            return 1;
        for (int i = 0; i < c->dim; ++i)
            out[i] += c->method->weight[k] * g[i];
    }
    return 0;
}

/* (13): component i from the increment of H when coordinate i moves, the earlier ones already moved.
 * For a short increment the quotient [H(after) - H(before)]/delta loses digits (eps |H| / delta),
 * which makes the residual rough and stalls Newton; below an absolute |delta| of 1e-3 it is the mean
 * of dH/dx_i over the segment by 5-point Gauss-Legendre, equal to the quotient up to O(delta^10)
 * and tending to (13)'s x'_i = x_i case as delta -> 0. (The threshold is absolute: the rounding of
 * H does not grow with |x_i|, while the quadrature error grows with delta.) */
static const double ITOH_ABE_SHORT = 1e-3;
enum { ITOH_ABE_NODES = 5 };

static int segment_mean_partial(const dstar_step *c, double *point, int i, double from, double to, double *mean)
{
    double g[Z];
    *mean = 0.0;
    for (int k = 0; k < ITOH_ABE_NODES; ++k) {
        point[i] = from + c->method->node[k] * (to - from);
        if (hamiltonian_gradient(c, point, g))
            return 1;
        *mean += c->method->weight[k] * g[i];
    }
    point[i] = to;
    return 0;
}

/* The rho components of (13), q already at q1: H is quadratic in rho at fixed q, so the quotient is
 * exactly [g^-1 rho]_a + 1/2 delta_a (g^-1)_aa with rho's earlier components moved (no cancellation,
 * and the derivative at delta = 0). `at_q1` is the frame at (q1, rho0), its g factored in the
 * workspace; y = g^-1 rho advances by delta_a times column a of g^-1. */
static void itoh_abe_momentum_part(const dstar_step *c, const dstar_frame *at_q1, const double *z1, double *out)
{
    const int n = c->sys->n, r = c->r;
    double y[N], *ginv = c->w->ginv;
    memcpy(y, at_q1->y, (size_t)r * sizeof *y);
    nh_dstar_inverse_metric(c, ginv);
    for (int a = 0; a < r; ++a) {
        const double delta = z1[n + a] - c->z0[n + a], *column = ginv + a * r;
        out[n + a] = y[a] + 0.5 * delta * column[a];
        for (int b = 0; b < r; ++b)
            y[b] += delta * column[b];
    }
}

/* moves[i] = 0 when X (and with a constant M, g, y, v and p) cannot depend on q_i: no entry of the
 * system's declared dX pattern differentiates along q_i. Else (a scanned pattern, M(q), a reduced
 * system) 1. */
static void basis_moving_coordinates(const dstar_step *c, unsigned char *moves)
{
    const nh_system *s = c->sys;
    const pattern *dx = &c->w->dx_nz;
    const int declared = c->method->basis == BASIS_SYSTEM && dx->head->declared && !nh_has_variable_mass(s) &&
                         !nh_is_reduced(s);
    memset(moves, !declared, (size_t)s->n);
    for (int e = 0; declared && e < dx->head->count; ++e)
        moves[dx->entry[e].i] = 1;
}

int nh_dstar_itoh_abe_gradient(const dstar_step *c, const double *z1, double *point, double *out, double *grads,
                               dstar_frame *last)
{
    const int n = c->sys->n;
    double before = c->energy0;
    dstar_frame f;   /* after the q loop: the frame at (q1, rho0), the loop's last point */
    unsigned char moves[N];
    int have_frame = 0;
    basis_moving_coordinates(c, moves);
    memcpy(point, c->z0, (size_t)c->dim * sizeof *point);
    for (int i = 0; i < n; ++i) {
        const double delta = z1[i] - c->z0[i];
        const int is_short = fabs(delta) <= ITOH_ABE_SHORT;
        if (is_short && segment_mean_partial(c, point, i, c->z0[i], z1[i], &out[i]))
            return 1;
        have_frame &= !is_short;
        point[i] = z1[i];
        /* f.z is `point`: when q_i does not move the basis, the frame's X, g, y and p are those at the
         * moved point, bit for bit, and only V is evaluated anew (by the energy and the gradient) */
        if ((!have_frame || moves[i]) && nh_dstar_frame_at(c, point, grads != NULL, &f))
            return 1;
        have_frame = 1;
        if (grads)   /* the same X and g with or without dX: the same energy bits */
            nh_dstar_frame_gradient(c, &f, grads + i * c->dim);
        const double after = nh_dstar_frame_energy(c, &f);
        if (!is_short)
            out[i] = (after - before) / delta;
        before = after;
    }
    itoh_abe_momentum_part(c, &f, z1, out);
    if (last)
        *last = f;
    return 0;
}

/* The discrete gradient at (z0, z1), and the frame at the midpoint for Pi. */
static int discrete_gradient(const dstar_step *c, const double *z1, const double *mid, dstar_frame *f, double *out)
{
    switch (c->method->gradient) {
    case DG_AVF:
        return avf_gradient(c, z1, out) || nh_dstar_frame_at(c, mid, 1, f);
    case DG_ITOH_ABE: {
        double point[Z];
        return nh_dstar_itoh_abe_gradient(c, z1, point, out, NULL, NULL) || nh_dstar_frame_at(c, mid, 1, f);
    }
    case DG_GONZALEZ:
        break;
    }
    return gonzalez_gradient(c, z1, mid, f, out);
}

/* ---- the step ---------------------------------------------------------------------------------- */

void nh_dstar_residual_at(const dstar_step *c, const double *z1, const dstar_frame *f, const double *grad,
                          double *res)
{
    double flow[Z];
    nh_dstar_apply_pi(c, f, c->w->d, grad, flow);
    for (int i = 0; i < c->dim; ++i)
        res[i] = (z1[i] - c->z0[i]) / c->h - flow[i];
}

static int dstar_residual(const double *z1, double *res, void *ctx)
{
    const dstar_step *c = ctx;
    double grad[Z], mid[Z];
    dstar_frame f;
    for (int i = 0; i < c->dim; ++i)
        mid[i] = 0.5 * (c->z0[i] + z1[i]);
    if (discrete_gradient(c, z1, mid, &f, grad))
        return 1;
    nh_dstar_structure_matrix(c, &f, c->w->d);
    nh_dstar_residual_at(c, z1, &f, grad, res);
    return 0;
}

static int dstar_jacobian(const double *z1, double *jac, void *ctx)
{
    const dstar_step *c = ctx;
    if (nh_dstar_has_analytic_jacobian(c))
        return nh_dstar_analytic_jacobian(c, z1, jac, NULL);
    return nh_fd_jacobian(c->dim, dstar_residual, ctx, z1, jac, c->w->fd);
}

/* The residual and the analytic matrix from one discrete gradient and midpoint frame (Newton backend) */
static int dstar_residual_and_jacobian(const double *z1, double *res, double *jac, void *ctx)
{
    return nh_dstar_analytic_jacobian(ctx, z1, jac, res);
}

/* rho = X(q)^T M v */
static int to_momentum_coordinates(const dstar_step *c, const double *q, const double *v, double *rho)
{
    const nh_system *s = c->sys;
    double *x = c->w->x, mv[N], *mass = c->w->mass;
    int slot;
    if (frame_basis(c, q, 0, &slot))
        return 1;
    nh_mass_matrix(s, q, mass);
    nh_matvec(s->n, s->n, mass, v, mv);
    nh_matvec_t(s->n, c->r, x, mv, rho);
    return 0;
}

/* What a D* stepper keeps of the end point of its last step: the method's state there, (q, rho), with
 * the velocity v = X g^-1 rho it returned and the QR signs its basis used. The method's state is
 * (q, rho); v is its output. Recomputing rho = X^T M v from that output at every step rounds the state
 * twice a step, and on the gearbox those roundings did not average out: with the QR basis the energy
 * drifted linearly, to 8.2e-12 |H| over 5e5 steps, while the solves kept H(q, rho) without bias. */
typedef struct dstar_continuation {
    int valid;
    unsigned long trajectory;   /* the stepper's trajectory it belongs to */
    double q[N], v[N], rho[N], signs[NH_MAX_CON];
} dstar_continuation;

/* A D* stepper's own data (nh_stepper.impl): its method, and what it keeps of its last step. */
typedef struct dstar_stepper {
    dstar_method method;
    dstar_continuation last;
} dstar_stepper;

/* rho at the start of a step from (q, v): the kept one when the step continues the stepper's last step,
 * i.e. starts from the very (q, v) it returned, in the same trajectory, with the same basis (signs). */
static const double *continued_rho(const nh_stepper *st, const dstar_step *c, const double *q, const double *v)
{
    const dstar_continuation *last = &((const dstar_stepper *)st->impl)->last;
    const size_t n = (size_t)c->sys->n * sizeof *q, m = (size_t)c->sys->m * sizeof *c->signs;
    const int continues = last->valid && last->trajectory == st->trajectory && !memcmp(q, last->q, n) &&
                          !memcmp(v, last->v, n) && !memcmp(c->signs, last->signs, m);
    return continues ? last->rho : NULL;
}

static void keep_continuation(nh_stepper *st, const dstar_step *c, const double *z1, const double *v)
{
    dstar_continuation *last = &((dstar_stepper *)st->impl)->last;
    const int n = c->sys->n;
    memcpy(last->q, z1, (size_t)n * sizeof *z1);
    memcpy(last->rho, z1 + n, (size_t)c->r * sizeof *z1);
    memcpy(last->v, v, (size_t)n * sizeof *v);
    memcpy(last->signs, c->signs, (size_t)c->sys->m * sizeof *c->signs);
    last->trajectory = st->trajectory;
    last->valid = 1;
}

/* z0 = (q, rho0) and H(z0), from one frame (without dX: the energy does not read it); rho0 is `rho`
 * when given (continued_rho), else X^T M v. */
static int dstar_start_point(dstar_step *c, const double *q, const double *v, const double *rho)
{
    const int n = c->sys->n;
    dstar_frame f;
    memcpy(c->z0, q, (size_t)n * sizeof *q);
    if (rho)
        memcpy(c->z0 + n, rho, (size_t)c->r * sizeof *rho);
    else if (to_momentum_coordinates(c, q, v, c->z0 + n))
        return 1;
    if (nh_dstar_frame_at(c, c->z0, 0, &f))
        return 1;
    c->energy0 = nh_dstar_frame_energy(c, &f);
    return 0;
}

/* The initial guess for z1: with the increments z1 - z0 of the last six steps (the history records
 * increments), z0 + the quintic through them (O(h^7) from z1); else the explicit Euler step
 * z0 + h Pi(z0) grad H(z0) (O(h^2)). */
static int dstar_guess(void *ctx, double *z1, const double *past)
{
    const dstar_step *c = ctx;
    double grad[Z], slope[Z];
    dstar_frame f;
    if (past) {
        nh_history_quintic(c->dim, past, z1);
        for (int i = 0; i < c->dim; ++i)
            z1[i] += c->z0[i];
        return 0;
    }
    if (nh_dstar_frame_at(c, c->z0, 1, &f))   /* one frame for grad H and Pi */
        return NH_STEP_SINGULAR;
    nh_dstar_frame_gradient(c, &f, grad);
    frame_pi_times(c, &f, grad, slope);
    for (int i = 0; i < c->dim; ++i)
        z1[i] = c->z0[i] + c->h * slope[i];
    return 0;
}

/* The step context of a D* stepper from (q, v) with step h: the QR signs, z0 (continuing the last
 * step's rho where it can) and H(z0). Non-zero when a frame fails there. */
static int step_context(const nh_stepper *st, double h, const double *q, const double *v, dstar_work *w,
                        dstar_step *c)
{
    const nh_system *s = st->sys;
    const int n = nh_dim(s);
    const dstar_method *method = &((const dstar_stepper *)st->impl)->method;
    dstar_work_layout(st->workspace, n, s->m, method->basis != BASIS_SYSTEM, w);
    *c = (dstar_step){.sys = s, .method = method, .w = w, .h = h, .r = n - s->m, .dim = 2 * n - s->m};
    if (c->method->basis != BASIS_SYSTEM) {   /* the signs of the step, and the basis at q0 */
        if (nh_qr_kernel_basis(s, q, c->signs, 1, w->x, NULL, w->qr))
            return 1;
        cache_store(c, q, 0);
    }
    prepare_patterns(c);
    return dstar_start_point(c, q, v, continued_rho(st, c, q, v));
}

static int dstar_step_fn(nh_stepper *st, double h, double *q, double *v, double *carried)
{
    (void)carried;
    const nh_system *s = st->sys;
    const int n = nh_dim(s);
    dstar_work w;
    dstar_step c;
    double z1[Z];
    if (step_context(st, h, q, v, &w, &c))
        return NH_STEP_SINGULAR;
    /* An analytic matrix is cheap: build it at each step's guess (a fresh, exact matrix converges in
     * 2-3 iterations); a difference matrix costs dim + 1 residuals and is kept across steps. */
    const int reuse = nh_dstar_has_analytic_jacobian(&c) ? NH_JACOBIAN_EACH_SOLVE : NH_JACOBIAN_ACROSS_SOLVES;
    nh_nonlinear_problem pb = {c.dim, dstar_residual, dstar_jacobian, &c, fmax(nh_norm_inf(c.dim, c.z0) / fabs(h), 1e-300),
                               reuse, h, nh_dstar_shares_residual(&c) ? dstar_residual_and_jacobian : NULL};
    int rc = nh_method_solve(st, &pb, h, q, v, NH_QUINTIC_POINTS, dstar_guess, NULL, z1);
    if (rc)
        return rc;
    if (nh_is_reduced(s))   /* its q rows read q' = q; keep q bit-exact */
        memcpy(z1, q, (size_t)n * sizeof *q);
    if (end_velocity(&c, z1, v))
        return NH_STEP_SINGULAR;
    memcpy(q, z1, (size_t)n * sizeof *q);
    keep_continuation(st, &c, z1, v);
    for (int i = 0; i < c.dim; ++i)
        z1[i] -= c.z0[i];
    nh_stepper_remember(st, z1, q, v);
    return NH_OK;
}

/* ---- Gauss-Legendre nodes, descriptors --------------------------------------------------------- */

static void gauss_legendre(int k, double *node, double *weight)
{
    for (int i = 0; i < k; ++i) {
        double x = cos(M_PI * (i + 0.75) / (k + 0.5)), dp = 1.0;
        for (int it = 0; it < 100; ++it) {   /* Newton on P_k */
            double p0 = 1.0, p1 = x;
            for (int j = 2; j <= k; ++j) {
                double p2 = ((2 * j - 1) * x * p1 - (j - 1) * p0) / j;
                p0 = p1;
                p1 = p2;
            }
            if (k == 1)
                p1 = x, p0 = 1.0;
            dp = k * (x * p1 - p0) / (x * x - 1.0);
            double dxn = p1 / dp;
            x -= dxn;
            if (fabs(dxn) < 1e-16)
                break;
        }
        node[i] = 0.5 * (1.0 - x);
        weight[i] = 1.0 / ((1.0 - x * x) * dp * dp);
    }
}

enum { P_FIRST = 0 };

static const nh_param_def avf_params[] = {
    {"nodes", 8, 1, MAX_NODES, 1, "Gauss-Legendre points: exact for grad H polynomial of degree 2 nodes - 1", NULL},
};
static const nh_param_def gonzalez_r_params[] = {
    {"fd", 0, 0, 1, 1, "1: derivatives of the QR basis by central differences (Remark 3.5)", NULL},
};

/* A recentred coordinate (nh_stepper_recentre): the kept end point moves with it, so rho continues. */
static void dstar_move_kept(nh_stepper *st, int i, double high, double low)
{
    dstar_continuation *last = &((dstar_stepper *)st->impl)->last;
    last->q[i] = nh_coordinate_moved(last->q[i], high, low);
}

static int dstar_create(nh_stepper *st, nh_error *err)
{
    const dstar_variant *variant = st->type->data;
    dstar_stepper *own = calloc(1, sizeof *own);
    if (!own)
        return nh_fail(err, NH_ERR_NOMEM, "out of memory");
    st->impl = own;
    st->move_kept = dstar_move_kept;
    dstar_method *m = &own->method;
    m->basis = variant->basis == BASIS_QR && st->params.value[P_FIRST] == 1 ? BASIS_QR_FD : variant->basis;
    m->gradient = variant->gradient;
    m->nodes = m->gradient == DG_AVF ? (int)st->params.value[P_FIRST] : m->gradient == DG_ITOH_ABE ? ITOH_ABE_NODES : 0;
    gauss_legendre(m->nodes, m->node, m->weight);
    m->matrix_nodes = m->nodes < DSTAR_MATRIX_NODES ? m->nodes : DSTAR_MATRIX_NODES;
    gauss_legendre(m->matrix_nodes, m->matrix_node, m->matrix_weight);
    return NH_OK;
}

static void dstar_destroy(nh_stepper *st)
{
    free(st->impl);
    st->impl = NULL;
}

static int needs_dstar_form(const nh_method_spec *self, const nh_system *sys, nh_error *err)
{
    const dstar_variant *variant = self->type->data;
    if (variant->basis == BASIS_SYSTEM && !sys->type->adapted_basis)
        return nh_fail(err, NH_ERR_INPUT,
                       "this discrete-gradient method needs the D* form (an adapted basis of D_q) of the system, and "
                       "%s has none; gonzalez-r computes the basis by QR and serves any system",
                       sys->type->name);
    return NH_OK;
}

static int dstar_solver_dim(const nh_method_spec *self, const nh_system *sys)
{
    (void)self;
    return 2 * sys->n - sys->m;
}

static long dstar_workspace_size(const nh_method_spec *self, const nh_system *sys)
{
    const dstar_variant *variant = self->type->data;
    return dstar_work_doubles(sys->n, sys->m, variant->basis != BASIS_SYSTEM);
}

#define ITOH_ABE_FLAGS                                                                                             \
    (NH_METHOD_IMPLICIT | NH_METHOD_PRESERVES_ENERGY | NH_METHOD_PRESERVES_CONSTRAINT | NH_METHOD_GENERAL_MASS |   \
     NH_METHOD_REDUCED)
#define SYMMETRIC_DG_FLAGS (ITOH_ABE_FLAGS | NH_METHOD_REVERSIBLE)

static const dstar_variant AVF = {BASIS_SYSTEM, DG_AVF}, GONZALEZ = {BASIS_SYSTEM, DG_GONZALEZ},
                           ITOH_ABE = {BASIS_SYSTEM, DG_ITOH_ABE}, GONZALEZ_R = {BASIS_QR, DG_GONZALEZ};

#define DSTAR_METHOD(var, nm, summ, np, pars, fl, ord, variant)                                                   \
    const nh_method_type var = {.name = nm, .summary = summ,                                                       \
                                .reference = "Celledoni et al. 2019 eqs. 8, 11-14, 17-18, Algorithm 1",            \
                                .n_params = np, .params = pars, .data = &variant, .fixed_flags = fl,               \
                                .fixed_order = ord, .accepts = needs_dstar_form, .solver_dim = dstar_solver_dim,   \
                                .workspace_size = dstar_workspace_size, .step = dstar_step_fn,                     \
                                .create = dstar_create, .destroy = dstar_destroy}

DSTAR_METHOD(nh_method_avf, "avf", "AVF discrete gradient method on D* (Celledoni et al. 2019, eqs. 11, 14)", 1,
             avf_params, SYMMETRIC_DG_FLAGS, 2, AVF);
DSTAR_METHOD(nh_method_gonzalez, "gonzalez",
             "Gonzalez midpoint discrete gradient method on D* (Celledoni et al. 2019, eqs. 12, 14)", 0, NULL,
             SYMMETRIC_DG_FLAGS, 2, GONZALEZ);
DSTAR_METHOD(nh_method_itoh_abe, "itoh-abe",
             "Itoh-Abe coordinate-increment discrete gradient on D* (Celledoni et al. 2019, eq. 13)", 0, NULL,
             ITOH_ABE_FLAGS, 1, ITOH_ABE);
DSTAR_METHOD(nh_method_gonzalez_r, "gonzalez-r",
             "Gonzalez-R: Gonzalez on D* with the basis from Householder QR with derivatives "
             "(Celledoni et al. 2019, Sect. 3.3)", 1, gonzalez_r_params, SYMMETRIC_DG_FLAGS, 2, GONZALEZ_R);

/* ---- the D* form with the system's basis, outside a stepper (checks and tests; see dstar.h) --------- */

static const dstar_method EXACT = {.basis = BASIS_SYSTEM, .gradient = DG_GONZALEZ};

/* A step context with its own heap workspace (freed by the caller with free(*block)). */
static int exact_step(const nh_system *s, dstar_step *c, dstar_work *w, double **block)
{
    if (!s->type->adapted_basis || !(*block = calloc((size_t)dstar_work_doubles(s->n, s->m, 0), sizeof **block)))
        return 1;
    dstar_work_layout(*block, s->n, s->m, 0, w);
    *c = (dstar_step){.sys = s, .method = &EXACT, .w = w, .h = 1.0, .r = s->n - s->m, .dim = 2 * s->n - s->m};
    prepare_patterns(c);
    return 0;
}

int nh_dstar_vector_field(const nh_system *s, const double *q, const double *v, double *zdot)
{
    dstar_step c;
    dstar_work w;
    double *block = NULL, z[Z], grad[Z];
    if (exact_step(s, &c, &w, &block))
        return 1;
    memcpy(z, q, (size_t)s->n * sizeof *q);
    int rc = to_momentum_coordinates(&c, q, v, z + s->n) || hamiltonian_gradient(&c, z, grad) ||
             pi_times(&c, z, grad, zdot);
    free(block);
    return rc;
}

int nh_dstar_hamiltonian(const nh_system *s, const double *z, double *value, double *grad)
{
    dstar_step c;
    dstar_work w;
    double *block = NULL;
    if (exact_step(s, &c, &w, &block))
        return 1;
    int rc = nh_dstar_hamiltonian_at(&c, z, value) || (grad && hamiltonian_gradient(&c, z, grad));
    free(block);
    return rc;
}

int nh_dstar_pi_times(const nh_system *s, const double *z, const double *g, double *out)
{
    dstar_step c;
    dstar_work w;
    double *block = NULL;
    if (exact_step(s, &c, &w, &block))
        return 1;
    int rc = pi_times(&c, z, g, out);
    free(block);
    return rc;
}
