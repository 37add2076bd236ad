! sonde.f90 - the sonde annotation API for Fortran (module `sonde`).
!
! The same calls as include/sonde.h, through ISO_C_BINDING. Fortran cannot
! call sonde.h's static inline functions, so these interfaces call a tiny C
! shim (annotate/fortran/sonde_fortran.c); the module and the shim together
! are the static library sonde_fortran. A program links that archive, never
! libsonde.so: it runs unchanged without sonde, and its annotations are live
! when libsonde.so is preloaded (`sonde run`). Documented in docs/API.md.
!
!   use sonde
!   call sonde_region_begin("solve")
!   call sonde_set_int("iteration", it)       ! integer or integer(c_int64_t)
!   call sonde_begin("phase", "exchange")
!   call sonde_end("phase")
!   call sonde_region_end("solve")
!
! Strings are character(len=*) of any length; trailing blanks are removed
! (the Fortran convention for fixed-length variables) and a NUL-terminated
! copy is passed to C. Every call is a subroutine that never fails the
! program; misuse is reported once on stderr as `sonde: ...`.
module sonde
  use, intrinsic :: iso_c_binding, only: c_char, c_int, c_int32_t, c_int64_t, &
                                         c_double, c_ptr, c_null_ptr, c_null_char, &
                                         c_associated
  implicit none
  private

  ! Attribute value types and scopes (sonde_attr_create), as in sonde.h.
  integer(c_int), parameter, public :: SONDE_STRING = 0, SONDE_INT = 1, SONDE_DOUBLE = 2
  integer(c_int), parameter, public :: SONDE_THREAD = 0, SONDE_PROCESS = 1

  ! An attribute handle, for hot loops. Null (and every call with it a no-op)
  ! when sonde is not loaded.
  type, public :: sonde_attr
    type(c_ptr) :: h = c_null_ptr
  end type sonde_attr

  public :: sonde_active
  public :: sonde_begin, sonde_begin_int, sonde_set, sonde_set_int, sonde_end
  public :: sonde_region_begin, sonde_region_end
  public :: sonde_attr_create, sonde_attr_begin, sonde_attr_set, sonde_attr_end
  public :: sonde_query, sonde_query_region, sonde_flush

  ! Query results and what a region query answers (sonde.h: struct
  ! sonde_region_stats; times in ns).
  integer(c_int), parameter, public :: SONDE_OK = 0, SONDE_NONE = 1, SONDE_UNAVAILABLE = -1
  type, bind(C), public :: sonde_region_stats
    integer(c_int64_t) :: calls, forced
    real(c_double) :: incl_ns, excl_ns, min_ns, max_ns, mean_ns, stddev_ns
    integer(c_int) :: ncounters
    integer(c_int64_t) :: counters(8)
  end type sonde_region_stats

  ! sonde_query(attr, value, scope, stats): value a string or an integer.
  interface sonde_query
    module procedure query_str, query_int64, query_int32
  end interface sonde_query

  ! Integer values: integer(c_int64_t) or default-kind (32-bit) integers.
  interface sonde_begin_int
    module procedure begin_int64, begin_int32
  end interface sonde_begin_int
  interface sonde_set_int
    module procedure set_int64, set_int32
  end interface sonde_set_int
  ! By handle: the value's type picks the call (string, integer, real(c_double)).
  interface sonde_attr_begin
    module procedure attr_begin_str, attr_begin_int64, attr_begin_int32, attr_begin_double
  end interface sonde_attr_begin
  interface sonde_attr_set
    module procedure attr_set_str, attr_set_int64, attr_set_int32, attr_set_double
  end interface sonde_attr_set

  ! The C shim (annotate/fortran/sonde_fortran.c).
  interface
    function c_active() bind(C, name="sonde_f_active") result(r)
      import :: c_int
      integer(c_int) :: r
    end function c_active
    subroutine c_begin(attr, value) bind(C, name="sonde_f_begin")
      import :: c_char
      character(kind=c_char), dimension(*), intent(in) :: attr, value
    end subroutine c_begin
    subroutine c_begin_int(attr, value) bind(C, name="sonde_f_begin_int")
      import :: c_char, c_int64_t
      character(kind=c_char), dimension(*), intent(in) :: attr
      integer(c_int64_t), value :: value
    end subroutine c_begin_int
    subroutine c_set(attr, value) bind(C, name="sonde_f_set")
      import :: c_char
      character(kind=c_char), dimension(*), intent(in) :: attr, value
    end subroutine c_set
    subroutine c_set_int(attr, value) bind(C, name="sonde_f_set_int")
      import :: c_char, c_int64_t
      character(kind=c_char), dimension(*), intent(in) :: attr
      integer(c_int64_t), value :: value
    end subroutine c_set_int
    subroutine c_end(attr) bind(C, name="sonde_f_end")
      import :: c_char
      character(kind=c_char), dimension(*), intent(in) :: attr
    end subroutine c_end
    subroutine c_region_begin(name) bind(C, name="sonde_f_region_begin")
      import :: c_char
      character(kind=c_char), dimension(*), intent(in) :: name
    end subroutine c_region_begin
    subroutine c_region_end(name) bind(C, name="sonde_f_region_end")
      import :: c_char
      character(kind=c_char), dimension(*), intent(in) :: name
    end subroutine c_region_end
    function c_attr_create(name, vtype, scope) bind(C, name="sonde_f_attr_create") result(h)
      import :: c_char, c_int, c_ptr
      character(kind=c_char), dimension(*), intent(in) :: name
      integer(c_int), value :: vtype, scope
      type(c_ptr) :: h
    end function c_attr_create
    subroutine c_attr_begin_str(h, value) bind(C, name="sonde_f_attr_begin_str")
      import :: c_char, c_ptr
      type(c_ptr), value :: h
      character(kind=c_char), dimension(*), intent(in) :: value
    end subroutine c_attr_begin_str
    subroutine c_attr_begin_int(h, value) bind(C, name="sonde_f_attr_begin_int")
      import :: c_int64_t, c_ptr
      type(c_ptr), value :: h
      integer(c_int64_t), value :: value
    end subroutine c_attr_begin_int
    subroutine c_attr_begin_double(h, value) bind(C, name="sonde_f_attr_begin_double")
      import :: c_double, c_ptr
      type(c_ptr), value :: h
      real(c_double), value :: value
    end subroutine c_attr_begin_double
    subroutine c_attr_set_str(h, value) bind(C, name="sonde_f_attr_set_str")
      import :: c_char, c_ptr
      type(c_ptr), value :: h
      character(kind=c_char), dimension(*), intent(in) :: value
    end subroutine c_attr_set_str
    subroutine c_attr_set_int(h, value) bind(C, name="sonde_f_attr_set_int")
      import :: c_int64_t, c_ptr
      type(c_ptr), value :: h
      integer(c_int64_t), value :: value
    end subroutine c_attr_set_int
    subroutine c_attr_set_double(h, value) bind(C, name="sonde_f_attr_set_double")
      import :: c_double, c_ptr
      type(c_ptr), value :: h
      real(c_double), value :: value
    end subroutine c_attr_set_double
    subroutine c_attr_end(h) bind(C, name="sonde_f_attr_end")
      import :: c_ptr
      type(c_ptr), value :: h
    end subroutine c_attr_end
    function c_query(attr, value, scope, s) bind(C, name="sonde_f_query") result(r)
      import :: c_char, c_int, sonde_region_stats
      character(kind=c_char), dimension(*), intent(in) :: attr, value
      integer(c_int), value :: scope
      type(sonde_region_stats), intent(out) :: s
      integer(c_int) :: r
    end function c_query
    function c_query_int(attr, value, scope, s) bind(C, name="sonde_f_query_int") result(r)
      import :: c_char, c_int, c_int64_t, sonde_region_stats
      character(kind=c_char), dimension(*), intent(in) :: attr
      integer(c_int64_t), value :: value
      integer(c_int), value :: scope
      type(sonde_region_stats), intent(out) :: s
      integer(c_int) :: r
    end function c_query_int
    function c_flush() bind(C, name="sonde_f_flush") result(r)
      import :: c_int
      integer(c_int) :: r
    end function c_flush
  end interface

contains

  ! .true. when the sonde runtime is loaded and sampling this process.
  logical function sonde_active()
    sonde_active = c_active() /= 0
  end function sonde_active

  ! Opens `value` of attribute `attr` (thread scope), nested inside whatever
  ! is open: values of one attribute form a stack.
  subroutine sonde_begin(attr, value)
    character(len=*), intent(in) :: attr, value
    call c_begin(trim(attr)//c_null_char, trim(value)//c_null_char)
  end subroutine sonde_begin

  subroutine begin_int64(attr, ivalue)
    character(len=*), intent(in) :: attr
    integer(c_int64_t), intent(in) :: ivalue
    call c_begin_int(trim(attr)//c_null_char, ivalue)
  end subroutine begin_int64

  subroutine begin_int32(attr, ivalue)
    character(len=*), intent(in) :: attr
    integer(c_int32_t), intent(in) :: ivalue
    call c_begin_int(trim(attr)//c_null_char, int(ivalue, c_int64_t))
  end subroutine begin_int32

  ! Replaces the innermost open value of `attr` (opens one if none is open):
  ! the loop-iteration case.
  subroutine sonde_set(attr, value)
    character(len=*), intent(in) :: attr, value
    call c_set(trim(attr)//c_null_char, trim(value)//c_null_char)
  end subroutine sonde_set

  subroutine set_int64(attr, ivalue)
    character(len=*), intent(in) :: attr
    integer(c_int64_t), intent(in) :: ivalue
    call c_set_int(trim(attr)//c_null_char, ivalue)
  end subroutine set_int64

  subroutine set_int32(attr, ivalue)
    character(len=*), intent(in) :: attr
    integer(c_int32_t), intent(in) :: ivalue
    call c_set_int(trim(attr)//c_null_char, int(ivalue, c_int64_t))
  end subroutine set_int32

  ! Closes the innermost open value of `attr`.
  subroutine sonde_end(attr)
    character(len=*), intent(in) :: attr
    call c_end(trim(attr)//c_null_char)
  end subroutine sonde_end

  ! A named region (attribute "region"); region_end names the region it
  ! closes, and sonde checks that it is the innermost open one.
  subroutine sonde_region_begin(name)
    character(len=*), intent(in) :: name
    call c_region_begin(trim(name)//c_null_char)
  end subroutine sonde_region_begin

  subroutine sonde_region_end(name)
    character(len=*), intent(in) :: name
    call c_region_end(trim(name)//c_null_char)
  end subroutine sonde_region_end

  ! Creates (or finds) attribute `name`. vtype: SONDE_STRING (default),
  ! SONDE_INT or SONDE_DOUBLE; scope: SONDE_THREAD (default) or SONDE_PROCESS.
  ! Call once, outside the hot loop.
  function sonde_attr_create(name, vtype, scope) result(a)
    character(len=*), intent(in) :: name
    integer, intent(in), optional :: vtype, scope
    type(sonde_attr) :: a
    integer(c_int) :: t, s
    t = SONDE_STRING
    s = SONDE_THREAD
    if (present(vtype)) t = int(vtype, c_int)
    if (present(scope)) s = int(scope, c_int)
    a%h = c_attr_create(trim(name)//c_null_char, t, s)
  end function sonde_attr_create

  subroutine attr_begin_str(a, value)
    type(sonde_attr), intent(in) :: a
    character(len=*), intent(in) :: value
    if (c_associated(a%h)) call c_attr_begin_str(a%h, trim(value)//c_null_char)
  end subroutine attr_begin_str

  subroutine attr_begin_int64(a, ivalue)
    type(sonde_attr), intent(in) :: a
    integer(c_int64_t), intent(in) :: ivalue
    call c_attr_begin_int(a%h, ivalue)
  end subroutine attr_begin_int64

  subroutine attr_begin_int32(a, ivalue)
    type(sonde_attr), intent(in) :: a
    integer(c_int32_t), intent(in) :: ivalue
    call c_attr_begin_int(a%h, int(ivalue, c_int64_t))
  end subroutine attr_begin_int32

  subroutine attr_begin_double(a, dvalue)
    type(sonde_attr), intent(in) :: a
    real(c_double), intent(in) :: dvalue
    call c_attr_begin_double(a%h, dvalue)
  end subroutine attr_begin_double

  subroutine attr_set_str(a, value)
    type(sonde_attr), intent(in) :: a
    character(len=*), intent(in) :: value
    if (c_associated(a%h)) call c_attr_set_str(a%h, trim(value)//c_null_char)
  end subroutine attr_set_str

  subroutine attr_set_int64(a, ivalue)
    type(sonde_attr), intent(in) :: a
    integer(c_int64_t), intent(in) :: ivalue
    call c_attr_set_int(a%h, ivalue)
  end subroutine attr_set_int64

  subroutine attr_set_int32(a, ivalue)
    type(sonde_attr), intent(in) :: a
    integer(c_int32_t), intent(in) :: ivalue
    call c_attr_set_int(a%h, int(ivalue, c_int64_t))
  end subroutine attr_set_int32

  subroutine attr_set_double(a, dvalue)
    type(sonde_attr), intent(in) :: a
    real(c_double), intent(in) :: dvalue
    call c_attr_set_double(a%h, dvalue)
  end subroutine attr_set_double

  subroutine sonde_attr_end(a)
    type(sonde_attr), intent(in) :: a
    call c_attr_end(a%h)
  end subroutine sonde_attr_end

  ! The totals so far of every level attr=value (docs/API.md, "Asking sonde
  ! while the program runs"): SONDE_OK, SONDE_NONE or SONDE_UNAVAILABLE.
  ! scope: SONDE_THREAD or SONDE_PROCESS.
  integer function query_str(attr, value, scope, s)
    character(len=*), intent(in) :: attr, value
    integer(c_int), intent(in) :: scope
    type(sonde_region_stats), intent(out) :: s
    query_str = c_query(trim(attr)//c_null_char, trim(value)//c_null_char, scope, s)
  end function query_str

  integer function query_int64(attr, ivalue, scope, s)
    character(len=*), intent(in) :: attr
    integer(c_int64_t), intent(in) :: ivalue
    integer(c_int), intent(in) :: scope
    type(sonde_region_stats), intent(out) :: s
    query_int64 = c_query_int(trim(attr)//c_null_char, ivalue, scope, s)
  end function query_int64

  integer function query_int32(attr, ivalue, scope, s)
    character(len=*), intent(in) :: attr
    integer(c_int32_t), intent(in) :: ivalue
    integer(c_int), intent(in) :: scope
    type(sonde_region_stats), intent(out) :: s
    query_int32 = c_query_int(trim(attr)//c_null_char, int(ivalue, c_int64_t), scope, s)
  end function query_int32

  ! A named region: sonde_query("region", name, scope, s).
  integer function sonde_query_region(name, scope, s)
    character(len=*), intent(in) :: name
    integer(c_int), intent(in) :: scope
    type(sonde_region_stats), intent(out) :: s
    sonde_query_region = c_query("region"//c_null_char, trim(name)//c_null_char, scope, s)
  end function sonde_query_region

  ! Writes what sonde recorded so far to the stream now.
  integer function sonde_flush()
    sonde_flush = c_flush()
  end function sonde_flush

end module sonde
