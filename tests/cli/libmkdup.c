/*
 * libmkdup.c: a shared library for the analyzer tests with its own `static` function
 * named mk_alpha, like mkstream's global one, so that a profile has two functions of one
 * name in two modules (the report must tell them apart with a [module] suffix), and a
 * function whose C++ name demangles to exponentially many bytes.
 */
volatile int mk_dup_sink;

static __attribute__((noinline)) void mk_alpha(void)
{
	mk_dup_sink = 7;
	mk_dup_sink += 77;
}

void mk_alpha_dup(void);
void *mk_dup_alpha_addr(void);

void mk_alpha_dup(void)
{
	mk_alpha();
}

void *mk_dup_alpha_addr(void)
{
	return (void *)&mk_alpha;
}

/* f(b<a, a>, b<b<a, a>, b<a, a> >, ...) of 26 parameters, each a template of the one
 * before twice (S_IS<n>_S<n>_E: the template b, the previous argument twice): 263 bytes
 * mangled, 870 MB demangled (tests/cli/cases/demangle_bomb.sh) */
void mk_exp_name(void) __asm__(
	"_Z1f1bI1aS0_ES_IS1_S1_ES_IS2_S2_ES_IS3_S3_ES_IS4_S4_ES_IS5_S5_ES_IS6_S6_"
	"ES_IS7_S7_ES_IS8_S8_ES_IS9_S9_ES_ISA_SA_ES_ISB_SB_ES_ISC_SC_ES_ISD_SD_ES"
	"_ISE_SE_ES_ISF_SF_ES_ISG_SG_ES_ISH_SH_ES_ISI_SI_ES_ISJ_SJ_ES_ISK_SK_ES_I"
	"SL_SL_ES_ISM_SM_ES_ISN_SN_ES_ISO_SO_ES_ISP_SP_E");
void *mk_exp_name_addr(void);

__attribute__((noinline)) void mk_exp_name(void)
{
	mk_dup_sink = 9;
	mk_dup_sink -= 99;
}

void *mk_exp_name_addr(void)
{
	return (void *)&mk_exp_name;
}
