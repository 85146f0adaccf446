/* Linked into the tests built with AddressSanitizer (tests/run.sh), exported
   with -rdynamic: a dlclose that keeps every library loaded.

   OpenMPI (and PMIx) load their plugins (mca_*.so) with dlopen and unload
   them in MPI_Finalize, before LeakSanitizer reports at exit: a leak
   allocated in an unloaded plugin then shows "<unknown module>", or worse
   the name of the library loaded just below its old address (libhetbal.so
   has been named so), and cannot be suppressed by name nor told apart from
   hetbal's own. OpenMPI 4.1 has no parameter to keep its plugins loaded
   (5.0's mca_base_component_disable_dlclose): this definition, found before
   the C library's, does it. Unloading nothing at exit is harmless. */
int dlclose(void *handle);

int dlclose(void *handle) {
    (void)handle;
    return 0;
}
