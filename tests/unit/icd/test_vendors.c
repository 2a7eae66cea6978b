/*
 * test_vendors: .icd file parsing and the search order of vendor libraries
 * (OCL_ICD_FILENAMES, then the OCL_ICD_VENDORS folder or file, then the system folder),
 * without duplicates; and the VAST_BACKEND selector's two forms.
 */
#include "icd/vendors.h"
#include "vast_cmocka.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

static char root[256];
static const char *fake_filenames, *fake_vendors;

static const char *fake_get(const char *name)
{
    if (!strcmp(name, "OCL_ICD_FILENAMES"))
        return fake_filenames;
    if (!strcmp(name, "OCL_ICD_VENDORS"))
        return fake_vendors;
    return NULL;
}

static void write_file(const char *dir, const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "/tmp/vast-test-vendors-XXXXXX");
    assert_non_null(mkdtemp(root));
    char dir[300];
    snprintf(dir, sizeof dir, "%s/system", root);
    mkdir(dir, 0700);
    write_file(dir, "b.icd", "libb.so\n");
    write_file(dir, "a.icd", "\n   liba.so.1   \n");
    write_file(dir, "notes.txt", "libignored.so\n");
    write_file(dir, "empty.icd", "\n\n");
    snprintf(dir, sizeof dir, "%s/user", root);
    mkdir(dir, 0700);
    write_file(dir, "vast.icd", "/opt/vast/libvast.so\n");
    write_file(dir, "dup.icd", "libb.so\n");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd) == 0 ? 0 : -1;
}

static void test_read_icd_file(void **state)
{
    (void)state;
    char path[300], lib[512];
    snprintf(path, sizeof path, "%s/system/a.icd", root);
    assert_true(vast_vendors_read_icd_file(path, lib, sizeof lib));
    assert_string_equal(lib, "liba.so.1");
    snprintf(path, sizeof path, "%s/system/empty.icd", root);
    assert_false(vast_vendors_read_icd_file(path, lib, sizeof lib));
    snprintf(path, sizeof path, "%s/system/missing.icd", root);
    assert_false(vast_vendors_read_icd_file(path, lib, sizeof lib));
    snprintf(path, sizeof path, "%s/system/a.icd", root);
    assert_false(vast_vendors_read_icd_file(path, lib, 4)); /* does not fit: refused, not cut */
}

static void test_collect_order_and_duplicates(void **state)
{
    (void)state;
    char system_dir[300], user_dir[300];
    snprintf(system_dir, sizeof system_dir, "%s/system", root);
    snprintf(user_dir, sizeof user_dir, "%s/user", root);
    fake_filenames = "/x/libfirst.so:libb.so";
    fake_vendors = user_dir;
    struct vast_candidates c;
    vast_vendors_collect(fake_get, system_dir, &c);
    const char *expected[] = {"/x/libfirst.so", "libb.so", "/opt/vast/libvast.so", "liba.so.1"};
    assert_int_equal(c.count, 4);
    for (size_t i = 0; i < 4; i++)
        assert_string_equal(c.path[i], expected[i]);
}

static void test_collect_vendors_as_file_and_nothing_set(void **state)
{
    (void)state;
    char system_dir[300], file[300];
    snprintf(system_dir, sizeof system_dir, "%s/system", root);
    snprintf(file, sizeof file, "%s/user/vast.icd", root);
    fake_filenames = NULL;
    fake_vendors = file;
    struct vast_candidates c;
    vast_vendors_collect(fake_get, system_dir, &c);
    assert_int_equal(c.count, 3);
    assert_string_equal(c.path[0], "/opt/vast/libvast.so");
    fake_vendors = NULL;
    vast_vendors_collect(fake_get, "/nonexistent", &c);
    assert_int_equal(c.count, 0);
}

static void test_selector_forms(void **state)
{
    (void)state;
    assert_true(vast_vendors_selector_is_path("/usr/lib/libnvidia-opencl.so.1"));
    assert_true(vast_vendors_selector_is_path("libpocl.so.2"));
    assert_false(vast_vendors_selector_is_path("NVIDIA"));
    assert_false(vast_vendors_selector_is_path("Portable Computing"));
}

VAST_CMOCKA_MAIN(setup, teardown,
                 test_read_icd_file, test_collect_order_and_duplicates, test_collect_vendors_as_file_and_nothing_set,
                 test_selector_forms)
