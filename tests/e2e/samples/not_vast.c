/* A shared library that is not VAST: run_modes.sh's self-tests hand it over as "libvast.so"
 * to prove that the ICD and LD_PRELOAD modes fail loudly when VAST is missing or broken. */
int vast_samples_not_an_icd(void);
int vast_samples_not_an_icd(void)
{
    return 0;
}
