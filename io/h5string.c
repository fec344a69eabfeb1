/* cisolve: variable-length string attributes of an input.h5, read without trusting the file.
 *
 * Such a string is stored as a reference (length, address of a global heap collection, index
 * of the object in it); libhdf5 1.10 follows it without checks, so a corrupt length, address,
 * index or heap object makes it read or copy out of bounds and crash (2 of 1,100 single-byte
 * flips of an input.h5 did, in H5HG_read). Here libhdf5 only hands over the stored reference:
 * a conversion to an opaque type of the same size, registered below, leaves its bytes as they
 * are. The heap collection it names is then read from the file with plain stdio, every size
 * checked against the collection and the file, and the string taken from it. (Should a
 * libhdf5 version refuse that conversion, the string is read by libhdf5 itself.)
 *
 * Layout (HDF5 file format specification, "Global Heap"): a collection is "GCOL", version 1,
 * 3 reserved bytes, its size (a length), then objects: index (2 bytes, 0 = free space, which
 * ends the list), reference count (2), reserved (4), size (a length), the data padded to a
 * multiple of 8. Addresses are relative to the base address (after any user block), lengths
 * and addresses little-endian of the widths the superblock gives.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#include "io/io_private.h"

/* The conversion vlen string -> opaque of the same size: no work, the bytes stay. Refused for
 * anything else, so that HDF5 reports "no conversion path" instead. */
static herr_t keep_reference(hid_t src, hid_t dst, H5T_cdata_t *cdata, size_t n, size_t stride,
                             size_t bkg_stride, void *buf, void *bkg, hid_t dxpl) {
  (void)n, (void)stride, (void)bkg_stride, (void)buf, (void)bkg, (void)dxpl;
  if (cdata->command == H5T_CONV_INIT) {
    if (H5Tget_class(src) != H5T_STRING || H5Tis_variable_str(src) <= 0 ||
        H5Tget_class(dst) != H5T_OPAQUE || H5Tget_size(src) != H5Tget_size(dst))
      return -1;
    cdata->need_bkg = H5T_BKG_NO;
  }
  return 0;
}

static int register_keep_reference(void) {
  static int done;
  if (done) return 1;
  hid_t vs = H5Tcopy(H5T_C_S1), op = H5Tcreate(H5T_OPAQUE, 1);
  done = vs >= 0 && op >= 0 && H5Tset_size(vs, H5T_VARIABLE) >= 0 &&
         H5Tregister(H5T_PERS_SOFT, "cisolve_keep_vlen_reference", vs, op, keep_reference) >= 0;
  cis_h5_close(&vs);
  cis_h5_close(&op);
  return done;
}

static uint64_t le(const unsigned char *p, size_t n) {
  uint64_t v = 0;
  for (size_t i = n; i-- > 0;) v = v << 8 | p[i];
  return v;
}

static int read_at(FILE *f, uint64_t off, void *buf, size_t n) {
  return fseeko(f, (off_t)off, SEEK_SET) == 0 && fread(buf, 1, n, f) == n;
}

/* The stored reference: string length, collection address, object index. */
typedef struct {
  uint64_t len, addr, index;
} vlen_ref;

/* 1 with the stored reference, 0 where this libhdf5 hands over no raw reference (the
 * conversion path is its internals': a version may lay a reference out otherwise). */
static int stored_reference(hid_t attr, size_t sa, vlen_ref *ref) {
  unsigned char raw[32];
  hid_t t = H5Tcreate(H5T_OPAQUE, 8 + sa);
  int ok = register_keep_reference() && t >= 0 && 8 + sa <= sizeof raw &&
           H5Aread(attr, t, raw) >= 0;
  cis_h5_close(&t);
  if (!ok) return 0;
  ref->len = le(raw, 4);
  ref->addr = le(raw + 4, sa);
  ref->index = le(raw + 4 + sa, 4);
  return 1;
}

/* libhdf5's own read, unchecked: only where stored_reference cannot work. */
static cis_err library_read(const char *path, hid_t attr, const char *what, char *out,
                            size_t len) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  hid_t mt = H5Tcopy(H5T_C_S1);
  char *vs = NULL;
  if (mt < 0 || H5Tset_size(mt, H5T_VARIABLE) < 0 || H5Aread(attr, mt, &vs) < 0 || !vs)
    CIS_FAIL(CIS_ERR_INPUT, "%s: cannot read string %s", path, what);
  if (strlen(vs) >= len)
    CIS_FAIL(CIS_ERR_INPUT, "%s: %s is %zu characters long, expected fewer than %zu", path,
             what, strlen(vs), len);
  snprintf(out, len, "%s", vs);
cleanup:
  if (vs) H5free_memory(vs);
  cis_h5_close(&mt);
  return err;
}

/* Find object `index` in the collection at `at` (file offset); its data offset and size. */
static cis_err heap_object(FILE *f, uint64_t fsize, uint64_t at, size_t ss, uint64_t index,
                           const char *path, const char *what, uint64_t *data, uint64_t *size) {
  unsigned char h[24];
  uint64_t hdr = 8 + ss, csize;
  CIS_CHECK(at <= fsize && fsize - at >= hdr && read_at(f, at, h, hdr) &&
            memcmp(h, "GCOL", 4) == 0 && h[4] == 1, CIS_ERR_INPUT,
            "%s: the string of %s points to offset %llu, where the file holds no global heap "
            "collection (corrupt file)", path, what, (unsigned long long)at);
  csize = le(h + 8, ss);
  CIS_CHECK(csize >= hdr && csize <= fsize - at, CIS_ERR_INPUT, "%s: the global heap collection "
            "at offset %llu holding the string of %s has size %llu, beyond the end of the file "
            "(corrupt file)", path, (unsigned long long)at, what, (unsigned long long)csize);
  uint64_t pos = hdr, end = csize;
  while (end - pos >= 8 + ss) {
    CIS_CHECK(read_at(f, at + pos, h, 8 + ss), CIS_ERR_IO, "%s: read error in the global heap "
              "at offset %llu", path, (unsigned long long)(at + pos));
    uint64_t idx = le(h, 2), sz = le(h + 8, ss), start = pos + 8 + ss;
    if (idx == 0) break; /* free space: the last object */
    CIS_CHECK(sz <= end - start, CIS_ERR_INPUT, "%s: global heap object %llu at offset %llu has "
              "size %llu, beyond its collection (corrupt file)", path, (unsigned long long)idx,
              (unsigned long long)(at + pos), (unsigned long long)sz);
    if (idx == index) {
      *data = at + start;
      *size = sz;
      return CIS_OK;
    }
    pos = start + ((sz + 7) / 8) * 8;
    if (pos > end) break;
  }
  CIS_ERROR(CIS_ERR_INPUT, "%s: the string of %s is object %llu of the global heap collection "
            "at offset %llu, which has no such object (corrupt file)", path, what,
            (unsigned long long)index, (unsigned long long)at);
}

cis_err cis_h5_read_vlen_string(const char *path, hid_t file, hid_t attr, const char *what,
                                char *out, size_t len) {
  cis_err err = CIS_OK;
  CIS_CLEANUP_FUNCTION;
  hid_t fcpl = H5Fget_create_plist(file);
  size_t sa = 0, ss = 0;
  hsize_t ub = 0;
  FILE *f = NULL;
  vlen_ref ref = {0, 0, 0};
  uint64_t data = 0, size = 0;
  if (fcpl < 0 || H5Pget_sizes(fcpl, &sa, &ss) < 0 || H5Pget_userblock(fcpl, &ub) < 0 ||
      sa < 2 || sa > 8 || ss < 2 || ss > 8)
    CIS_FAIL(CIS_ERR_INPUT, "%s: cannot read the address and length sizes of the file", path);
  if (!stored_reference(attr, sa, &ref)) {
    cis_h5_close(&fcpl);
    return library_read(path, attr, what, out, len);
  }
  if (ref.len >= len)
    CIS_FAIL(CIS_ERR_INPUT, "%s: %s is %llu characters long, expected fewer than %zu", path,
             what, (unsigned long long)ref.len, len);
  out[0] = '\0';
  if (ref.len == 0) goto cleanup;
  f = fopen(path, "rb");
  off_t end = f && fseeko(f, 0, SEEK_END) == 0 ? ftello(f) : -1;
  if (end < 0) CIS_FAIL(CIS_ERR_IO, "cannot reopen %s to read %s", path, what);
  uint64_t fsize = (uint64_t)end;
  CIS_TRY(heap_object(f, fsize, (uint64_t)ub + ref.addr, ss, ref.index, path, what, &data,
                      &size));
  if (size != ref.len)
    CIS_FAIL(CIS_ERR_INPUT, "%s: %s has length %llu but its heap object holds %llu bytes "
             "(corrupt file)", path, what, (unsigned long long)ref.len,
             (unsigned long long)size);
  if (!read_at(f, data, out, (size_t)size))
    CIS_FAIL(CIS_ERR_IO, "%s: read error in the global heap at offset %llu", path,
             (unsigned long long)data);
  out[size] = '\0';
  if (strlen(out) != size)
    CIS_FAIL(CIS_ERR_INPUT, "%s: %s holds a NUL byte, expected text", path, what);
cleanup:
  if (f) fclose(f);
  cis_h5_close(&fcpl);
  return err;
}
