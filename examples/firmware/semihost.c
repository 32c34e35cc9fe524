/* semihost.c: port.h on a Cortex-M under a debugger or QEMU: output and
 * exit by Arm semihosting (`bkpt 0xab`, operation in r0, argument in r1),
 * time from SysTick on the core clock.
 *
 * Semihosting stops the core at the bkpt and lets the host do the call;
 * without a debugger or QEMU attached the bkpt faults. On a real board,
 * replace fw_puts with a UART driver and fw_exit with a loop. */
#include "port.h"

#define SYS_WRITE0 0x04
#define SYS_EXIT 0x18
#define SYS_EXIT_EXTENDED 0x20
#define ADP_STOPPED_APPLICATION_EXIT 0x20026

static uintptr_t semihost(uintptr_t op, uintptr_t arg)
{
	register uintptr_t r0 __asm__("r0") = op;
	register uintptr_t r1 __asm__("r1") = arg;
	__asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
	return r0;
}

void fw_puts(const char *s)
{
	semihost(SYS_WRITE0, (uintptr_t)s);
}

/* SYS_EXIT on A32/T32 carries only "application exit" (status 0) or an
 * error (QEMU exits with 1); SYS_EXIT_EXTENDED carries the status itself. */
void fw_exit(int code)
{
	static uintptr_t block[2];
	block[0] = ADP_STOPPED_APPLICATION_EXIT;
	block[1] = (uintptr_t)code;
	semihost(SYS_EXIT_EXTENDED, (uintptr_t)block);
	semihost(SYS_EXIT, code == 0 ? ADP_STOPPED_APPLICATION_EXIT : 0);
	for (;;)
		;
}

/* SysTick: a 24-bit down counter on the core clock (CLKSOURCE 1); its
 * exception counts the wraps. */
#define SYST_CSR (*(volatile uint32_t *)0xe000e010u)
#define SYST_RVR (*(volatile uint32_t *)0xe000e014u)
#define SYST_CVR (*(volatile uint32_t *)0xe000e018u)
#define SYST_PERIOD (1u << 24)

/* the mps2 boards' SYSCLK (QEMU's hw/arm/mps2.c, and the FPGA images') */
const uint32_t fw_clock_hz = 25000000;

static volatile uint32_t systick_wraps;

void SysTick_Handler(void)
{
	systick_wraps++;
}

void fw_clock_start(void)
{
	SYST_RVR = SYST_PERIOD - 1;
	SYST_CVR = 0;
	SYST_CSR = 7; /* enable, exception, core clock */
	while (SYST_CVR == 0) /* until the first reload: 0 would read as a full period */
		;
}

uint64_t fw_clock(void)
{
	uint32_t hi, lo;
	do { /* a wrap between the two reads: read again */
		hi = systick_wraps;
		lo = SYST_CVR;
	} while (hi != systick_wraps);
	return (uint64_t)hi * SYST_PERIOD + (SYST_PERIOD - 1 - lo);
}

extern uint32_t __stack_bottom[], __stack_top[];
#define STACK_PAINT 0x5741434bu

/* Called by the reset handler: fill the stack below the current frame
 * with a pattern (fw_stack_unused finds where it ends). */
void fw_stack_paint(void)
{
	uint32_t *sp;
	__asm__ volatile("mov %0, sp" : "=r"(sp));
	for (uint32_t *p = __stack_bottom; p < sp - 16; p++)
		*p = STACK_PAINT;
}

long fw_stack_unused(void)
{
	uint32_t *p = __stack_bottom;
	while (p < __stack_top && *p == STACK_PAINT)
		p++;
	return (long)((char *)p - (char *)__stack_bottom);
}
