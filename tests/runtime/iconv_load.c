/* iconv_load.c - spends its time in a gconv module that libc itself loads
 * (iconv_open dlopens it internally, not through the program's dlopen), for
 * the lifecycle test: modules loaded behind the preload's wrappers must
 * still be recorded and named.
 *
 * usage: iconv_load      (exit 3 when the gconv module is missing here)
 */
#include <iconv.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
static double cpu(void){struct timespec t;clock_gettime(CLOCK_THREAD_CPUTIME_ID,&t);return t.tv_sec+t.tv_nsec*1e-9;}
__attribute__((noinline)) static void convert_loop(iconv_t cd, double sec) {
  static char in[65536], out[65536*2];
  memset(in, 'a', sizeof in);
  double end = cpu() + sec;
  while (cpu() < end) { char *ip = in, *op = out; size_t il = sizeof in, ol = sizeof out; iconv(cd, &ip, &il, &op, &ol); }
}
int main(void) {
  iconv_t cd = iconv_open("IBM1047", "ISO-8859-1");
  if (cd == (iconv_t)-1) { perror("iconv_open"); return 3; }
  convert_loop(cd, 0.5);
  iconv_close(cd);
  printf("converted\n");
  return 0;
}
