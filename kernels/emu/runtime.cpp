// The emulated device's scheduler: a launch runs its blocks one after the
// other; a block's threads are fibers on the calling OS thread, each run
// until it reaches a barrier (or returns), in thread order, so a launch is
// deterministic. `__syncthreads` waits for the block's live threads (a
// returned thread counts as arrived); warp operations wait for the live
// lanes of their warp (EMU_WARP, 32 or 64, consecutive linear thread ids). A block whose
// threads all wait but no barrier can complete is a deadlock: the launch
// fails with a description instead of hanging.

#include "emu.h"

#include <cstdarg>
#include <cstdio>
#include <mutex>
#include <string>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

#if defined(__x86_64__) && !defined(EMU_UCONTEXT)
#define EMU_SWITCH_ASM 1
#else
#define EMU_SWITCH_ASM 0
#include <ucontext.h>
#endif

namespace emu {

enum State { RUNNABLE, AT_BLOCK, AT_WARP, DONE };

struct Fiber : Thread {
    unsigned id, warp;
    State state;
    // Warp exchanges: the value given, the lane read (-1: none), the
    // value read; or a pointer shared.
    uint64_t value_in, value_out;
    int source;
    const void *shared;
    char *stack;
#if EMU_SWITCH_ASM
    void *sp;
#else
    ucontext_t context;
#endif
};

Thread *current = nullptr;
dim3 grid_dim, block_dim, block_idx;

namespace {

const size_t STACK_BYTES = 256 * 1024;

Thunk kernel = nullptr;
void **kernel_params = nullptr;
std::vector<Fiber> fibers;
std::vector<unsigned> warp_live, warp_waiting, warp_at_block, queue;
unsigned block_live, block_waiting, done;
Fiber *running = nullptr;

#if EMU_SWITCH_ASM
void *scheduler_sp;
#else
ucontext_t scheduler_context;
#endif

} // namespace
} // namespace emu

// ---------------------------------------------------------------------
// Context switches. x86-64: callee-saved registers, MXCSR and the x87
// control word on the stack, then the stack pointer swapped (swapcontext
// also saves the signal mask, a system call per switch: ten times slower).
extern "C" void emu_fiber_main(emu::Fiber *f);

#if EMU_SWITCH_ASM
extern "C" void emu_switch(void **save_sp, void *load_sp);
extern "C" void emu_fiber_start();
asm(R"(
    .text
    .p2align 4
    .globl emu_switch
    .hidden emu_switch
    .type emu_switch, @function
emu_switch:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    subq $8, %rsp
    stmxcsr (%rsp)
    fnstcw 4(%rsp)
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    ldmxcsr (%rsp)
    fldcw 4(%rsp)
    addq $8, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .size emu_switch, .-emu_switch

    .p2align 4
    .globl emu_fiber_start
    .hidden emu_fiber_start
    .type emu_fiber_start, @function
emu_fiber_start:
    movq %rbx, %rdi
    call emu_fiber_main
    ud2
    .size emu_fiber_start, .-emu_fiber_start
)");
#endif

namespace emu {
namespace {

// A fresh fiber whose first switch-in enters emu_fiber_start with the
// fiber in %rbx (the stack 16-byte aligned at its call).
void prepare(Fiber &f) {
#if EMU_SWITCH_ASM
    uintptr_t top = ((uintptr_t)f.stack + STACK_BYTES) & ~(uintptr_t)15;
    uint64_t *ret = (uint64_t *)(top - 8);
    uint64_t *sp = ret - 7;
    *ret = (uint64_t)(uintptr_t)&emu_fiber_start;
    uint32_t mxcsr;
    uint16_t fpucw;
    asm volatile("stmxcsr %0" : "=m"(mxcsr));
    asm volatile("fnstcw %0" : "=m"(fpucw));
    std::memset(sp, 0, 7 * 8);
    std::memcpy(sp, &mxcsr, 4);
    std::memcpy((char *)sp + 4, &fpucw, 2);
    sp[5] = (uint64_t)(uintptr_t)&f; // popped into %rbx
    f.sp = sp;
#else
    getcontext(&f.context);
    f.context.uc_stack.ss_sp = f.stack;
    f.context.uc_stack.ss_size = STACK_BYTES;
    f.context.uc_link = nullptr;
    uintptr_t p = (uintptr_t)&f;
    makecontext(&f.context, (void (*)())(void (*)(unsigned, unsigned))[](unsigned hi, unsigned lo) {
        emu_fiber_main((Fiber *)(((uintptr_t)hi << 32) | lo));
    }, 2, (unsigned)(p >> 32), (unsigned)p);
#endif
}

void resume(Fiber &f) {
    running = &f;
    current = &f;
#if EMU_SWITCH_ASM
    emu_switch(&scheduler_sp, f.sp);
#else
    swapcontext(&scheduler_context, &f.context);
#endif
}

// Back to the scheduler; returns when the fiber is resumed.
void suspend() {
    Fiber &f = *running;
#if EMU_SWITCH_ASM
    emu_switch(&f.sp, scheduler_sp);
#else
    swapcontext(&f.context, &scheduler_context);
#endif
}

void wake(Fiber &f) {
    f.state = RUNNABLE;
    queue.push_back(f.id);
}

void check_block() {
    if (block_waiting == 0 || block_waiting != block_live) return;
    block_waiting = 0;
    warp_at_block.assign(warp_at_block.size(), 0);
    for (Fiber &f : fibers) {
        if (f.state == AT_BLOCK) wake(f);
    }
}

// The warp's lanes have all arrived: each reads its source's value.
//
// 64-lane waves run in lockstep (EMU_WAVE64): lanes that branched around a
// wave operation are masked off, not waited for. A wave operation
// therefore also completes when every other live lane waits at the block
// barrier (it has passed the operation); those lanes' values are not read
// (a source among them gives the reader its own value).
void check_warp(unsigned w) {
#ifdef EMU_WAVE64
    const unsigned passed = warp_at_block[w];
#else
    const unsigned passed = 0;
#endif
    if (warp_waiting[w] == 0 || warp_waiting[w] + passed != warp_live[w]) return;
    warp_waiting[w] = 0;
    const unsigned first = EMU_WARP * w,
                   end = first + EMU_WARP < fibers.size() ? first + EMU_WARP : (unsigned)fibers.size();
    for (unsigned t = first; t < end; t++) {
        Fiber &f = fibers[t];
        if (f.state != AT_WARP) continue;
        f.value_out = f.value_in;
        if (f.source >= 0 && first + f.source < end && fibers[first + f.source].state == AT_WARP) {
            f.value_out = fibers[first + f.source].value_in;
        }
    }
    for (unsigned t = first; t < end; t++) {
        if (fibers[t].state == AT_WARP) wake(fibers[t]);
    }
}

void wait_warp(uint64_t value, int source, const void *shared) {
    Fiber &f = *running;
    f.value_in = value;
    f.source = source;
    // A plain barrier keeps the pointer shared before it (emu_mma_u8's
    // second barrier: lanes still read their peers' fragments).
    if (shared) f.shared = shared;
    f.state = AT_WARP;
    warp_waiting[f.warp]++;
    check_warp(f.warp);
    suspend();
}

std::string error;

void fail(const char *format, ...) {
    char buf[512];
    va_list args;
    va_start(args, format);
    vsnprintf(buf, sizeof buf, format, args);
    va_end(args);
    error = buf;
}

// Stacks outlive launches (reused); each has a guard page below it.
bool ensure_stacks(size_t n) {
    static std::vector<char *> stacks;
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    while (stacks.size() < n) {
        void *p = mmap(nullptr, STACK_BYTES + page, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED) return false;
        mprotect(p, page, PROT_NONE);
        stacks.push_back((char *)p + page);
    }
    fibers.resize(n);
    for (size_t i = 0; i < n; i++) fibers[i].stack = stacks[i];
    return true;
}

bool run_block() {
    const unsigned n = (unsigned)fibers.size(), warps = (n + EMU_WARP - 1) / EMU_WARP;
    warp_live.assign(warps, 0);
    warp_waiting.assign(warps, 0);
    warp_at_block.assign(warps, 0);
    queue.clear();
    for (unsigned t = 0; t < n; t++) {
        Fiber &f = fibers[t];
        f.idx = {t % block_dim.x, t / block_dim.x % block_dim.y, t / (block_dim.x * block_dim.y)};
        f.id = t;
        f.lane = t % EMU_WARP;
        f.warp = t / EMU_WARP;
        f.shared = nullptr;
        warp_live[f.warp]++;
        prepare(f);
        wake(f);
    }
    block_live = n;
    block_waiting = 0;
    done = 0;
    for (size_t head = 0; head < queue.size(); head++) {
        Fiber &f = fibers[queue[head]];
        if (f.state == RUNNABLE) resume(f);
    }
    current = nullptr;
    if (done == n) return true;
    unsigned at_block = 0, at_warp = 0, first = n;
    for (const Fiber &f : fibers) {
        at_block += f.state == AT_BLOCK;
        at_warp += f.state == AT_WARP;
        if (f.state == AT_WARP && first == n) first = f.id;
    }
    fail("deadlock in block (%u, %u, %u): %u threads wait at __syncthreads, %u at warp "
         "operations (first: thread %u, whose warp has lanes at __syncthreads), %u returned",
         block_idx.x, block_idx.y, block_idx.z, at_block, at_warp, first, done);
    return false;
}

std::mutex launches;

} // namespace

void block_barrier() {
    Fiber &f = *running;
    f.state = AT_BLOCK;
    block_waiting++;
    warp_at_block[f.warp]++;
    check_warp(f.warp); // lockstep waves: a wave operation may complete now
    check_block();
    suspend();
}

uint64_t warp_exchange(uint64_t value, int source) {
    wait_warp(value, source, nullptr);
    return running->value_out;
}

void warp_barrier() { wait_warp(0, -1, nullptr); }

void warp_share(const void *mine) { wait_warp(0, -1, mine); }

const void *peer(unsigned lane) {
    const unsigned t = running->warp * EMU_WARP + lane;
    return t < fibers.size() && fibers[t].state != DONE ? fibers[t].shared : nullptr;
}

} // namespace emu

extern "C" void emu_fiber_main(emu::Fiber *f) {
    emu::kernel(emu::kernel_params);
    f->state = emu::DONE;
    emu::done++;
    emu::warp_live[f->warp]--;
    emu::block_live--;
    emu::check_warp(f->warp);
    emu::check_block();
    emu::suspend();
    __builtin_trap(); // a returned fiber is never resumed
}

// The kernel `name`'s entry, or null.
extern "C" __attribute__((visibility("default"))) emu::Thunk emu_kernel(const char *name) {
    for (const emu::Entry *e = emu::entries; e->name; e++) {
        if (std::strcmp(e->name, name) == 0) return e->thunk;
    }
    return nullptr;
}

// Runs a launch to completion: dims = grid x, y, z, block x, y, z. 0 on
// success, else an error message in `err`.
extern "C" __attribute__((visibility("default"))) int
emu_launch(emu::Thunk thunk, const unsigned *dims, unsigned shared_bytes, void **params, char *err,
           size_t err_len) {
    using namespace emu;
    std::lock_guard<std::mutex> lock(launches);
    error.clear();
    const unsigned threads = dims[3] * dims[4] * dims[5];
    if (threads == 0 || threads > 1024 || dims[0] * dims[1] * dims[2] == 0) {
        fail("bad launch: grid %u x %u x %u, block %u x %u x %u", dims[0], dims[1], dims[2], dims[3],
             dims[4], dims[5]);
    } else if (shared_bytes > EMU_DYNAMIC_SHARED_BYTES) {
        fail("%u bytes of dynamic shared memory (at most %u)", shared_bytes, EMU_DYNAMIC_SHARED_BYTES);
    } else if (!ensure_stacks(threads)) {
        fail("no memory for %u fiber stacks", threads);
    } else {
        kernel = thunk;
        kernel_params = params;
        grid_dim = {dims[0], dims[1], dims[2]};
        block_dim = {dims[3], dims[4], dims[5]};
        for (unsigned z = 0; z < dims[2] && error.empty(); z++) {
            for (unsigned y = 0; y < dims[1] && error.empty(); y++) {
                for (unsigned x = 0; x < dims[0] && error.empty(); x++) {
                    block_idx = {x, y, z};
                    run_block();
                }
            }
        }
    }
    if (error.empty()) return 0;
    std::snprintf(err, err_len, "%s", error.c_str());
    return 1;
}
