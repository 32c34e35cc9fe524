/* port.h: what app.c needs from the machine it runs on, implemented twice:
 * semihost.c for the Cortex-M4 under QEMU (semihosting, SysTick) and
 * host.c for the host build that gives the reference output. */
#ifndef FW_PORT_H
#define FW_PORT_H
#include <stdint.h>

void fw_puts(const char *s);  /* write s as it is (no newline added) */
void fw_exit(int code);       /* end the program with this status */
/* A free-running count of the core clock, or 0 where there is none (host.c);
 * FW_CLOCK_HZ is its rate (0: none). */
uint64_t fw_clock(void);
extern const uint32_t fw_clock_hz;
/* The bytes of the stack never written so far, or -1 where unknown. */
long fw_stack_unused(void);
#endif
