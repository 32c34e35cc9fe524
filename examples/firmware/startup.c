/* startup.c: the vector table and reset handler of a bare-metal Cortex-M4
 * program (no C library start files, no heap).
 *
 * Reset: enable the FPU when the code uses it, copy .data from flash to RAM,
 * zero .bss, paint the stack (semihost.c measures its use), start the clock,
 * run main and exit with its status. The symbols come from mps2_an386.ld. */
#include "port.h"

#include <stdint.h>

extern uint32_t __data_load[], __data_start[], __data_end[], __bss_start[], __bss_end[], __stack_top[];
int main(void);
void fw_stack_paint(void);
void fw_clock_start(void);
void SysTick_Handler(void);

void Reset_Handler(void)
{
#if defined(__ARM_FP)
	/* CPACR: full access to coprocessors 10 and 11 (the FPU), before any
	 * float instruction; the barriers make it take effect */
	*(volatile uint32_t *)0xe000ed88u |= 0xfu << 20;
	__asm__ volatile("dsb\n\tisb" ::: "memory");
#endif
	for (uint32_t *s = __data_load, *d = __data_start; d < __data_end;)
		*d++ = *s++;
	for (uint32_t *d = __bss_start; d < __bss_end;)
		*d++ = 0;
	fw_stack_paint();
	fw_clock_start();
	fw_exit(main());
}

/* Any fault or unexpected exception: say so and exit with status 3. */
static void Fault_Handler(void)
{
	uint32_t ipsr;
	__asm__ volatile("mrs %0, ipsr" : "=r"(ipsr));
	char msg[] = "fault: exception 00\n";
	msg[17] = (char)('0' + ipsr / 10 % 10);
	msg[18] = (char)('0' + ipsr % 10);
	fw_puts(msg);
	fw_exit(3);
}

/* The 16 system exceptions; the board's interrupts stay disabled. */
__attribute__((section(".vectors"), used)) static void (*const vectors[16])(void) = {
	(void (*)(void))__stack_top, /* initial stack pointer */
	Reset_Handler,
	Fault_Handler, /* NMI */
	Fault_Handler, /* HardFault */
	Fault_Handler, /* MemManage */
	Fault_Handler, /* BusFault */
	Fault_Handler, /* UsageFault */
	0, 0, 0, 0,
	Fault_Handler, /* SVCall */
	Fault_Handler, /* DebugMonitor */
	0,
	Fault_Handler, /* PendSV */
	SysTick_Handler,
};
