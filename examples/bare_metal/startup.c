/* Reset for a Cortex-M4 with no operating system: the vector table, then the FPU enabled,
 * .data copied from flash, .bss zeroed, newlib's semihosting I/O opened, main run, and its
 * result handed to exit() (semihosting ends the emulator). */
#include <stdint.h>
#include <stdlib.h>

extern uint32_t __data_load, __data_start, __data_end, __bss_start__, __bss_end__, __stack_top;
extern void initialise_monitor_handles(void);
extern void __libc_init_array(void);
extern int main(void);

void Reset_Handler(void);
static void Fault_Handler(void) { exit(99); }

__attribute__((section(".vectors"), used)) static void (*const vectors[16])(void) = {
    (void (*)(void))&__stack_top, Reset_Handler, Fault_Handler, Fault_Handler, Fault_Handler,
    Fault_Handler, Fault_Handler, 0, 0, 0, 0, Fault_Handler, Fault_Handler, 0, Fault_Handler,
    Fault_Handler};

/* What crti.o would define (linked with -nostartfiles): __libc_init_array calls _init
 * after the constructors' table, which is all this image needs. */
void _init(void) {}
void _fini(void) {}

void Reset_Handler(void) {
  /* CPACR: full access to coprocessors 10 and 11, the single-precision FPU. */
  *(volatile uint32_t*)0xE000ED88 |= 0xFu << 20;
  __asm volatile("dsb\n isb");
  for (uint32_t *from = &__data_load, *to = &__data_start; to < &__data_end;) *to++ = *from++;
  for (uint32_t* to = &__bss_start__; to < &__bss_end__;) *to++ = 0;
  initialise_monitor_handles();
  __libc_init_array();
  exit(main());
}
