! api_f - a smaller api_c (tests/api/api_c.c) in Fortran, through module
! sonde (include/sonde.f90) and its C shim.
!
! Over N numbered iterations (sonde_set_int("iteration", i)), the phases
! solve, exchange and checkpoint (attribute "phase", each also a region of
! the same name inside the region "run") get 70/20/10 % of identical work
! units: a serial chain of multiplications modulo 2**31-1 (no overflow in
! 64-bit integers, so the result is exact and portable). The process-scope
! attribute "units" is set by handle.
!
! usage: api_f [ITERATIONS]   default 5
! Output: the plan, then "checksum N". Exit 0, or 2 on a bad argument.
module api_f_work
  use, intrinsic :: iso_c_binding, only: c_int64_t
  implicit none
  private
  public :: kernel, phase
  integer(c_int64_t), parameter :: unit_iters = 20000_c_int64_t
contains
  ! units * unit_iters steps of x = (48271 * x + 1) mod (2**31 - 1)
  function kernel(seed, units) result(x)
    integer(c_int64_t), intent(in) :: seed, units
    integer(c_int64_t) :: x, i
    x = modulo(seed, 2147483646_c_int64_t) + 1_c_int64_t
    do i = 1, units * unit_iters
      x = modulo(48271_c_int64_t * x + 1_c_int64_t, 2147483647_c_int64_t)
    end do
  end function kernel

  function phase(name, seed, units) result(x)
    use sonde
    character(len=*), intent(in) :: name
    integer(c_int64_t), intent(in) :: seed, units
    integer(c_int64_t) :: x
    call sonde_begin("phase", name)
    call sonde_region_begin(name)
    x = kernel(seed, units)
    call sonde_region_end(name)
    call sonde_end("phase")
  end function phase
end module api_f_work

program api_f
  use, intrinsic :: iso_c_binding, only: c_int64_t
  use sonde
  use api_f_work
  implicit none
  integer :: n, i, st
  integer(c_int64_t) :: total, s
  integer(c_int64_t), parameter :: units(3) = [7_c_int64_t, 2_c_int64_t, 1_c_int64_t]
  character(len=32) :: arg
  type(sonde_attr) :: units_attr
  type(sonde_region_stats) :: rs

  n = 5
  if (command_argument_count() > 1) call usage()
  if (command_argument_count() == 1) then
    call get_command_argument(1, arg)
    read (arg, *, iostat=st) n
    if (st /= 0 .or. n < 1) call usage()
  end if
  write (*, '(a,i0,a,i0,a,i0,a,i0)') 'api_f: iterations=', n, ' units solve=', units(1), &
    ' exchange=', units(2), ' checkpoint=', units(3)

  units_attr = sonde_attr_create("units", SONDE_INT, SONDE_PROCESS)
  call sonde_attr_begin(units_attr, sum(units))
  call sonde_region_begin("run")
  total = 0
  do i = 0, n - 1
    call sonde_set_int("iteration", i)
    s = int(i, c_int64_t) * 1000003_c_int64_t
    s = phase("solve", s, units(1))
    s = phase("exchange", s, units(2))
    s = phase("checkpoint", s, units(3))
    total = modulo(total * 31_c_int64_t + s, 2147483647_c_int64_t)
  end do
  call sonde_end("iteration")
  call sonde_region_end("run")
  call sonde_attr_end(units_attr)

  write (*, '(a,i0)') 'checksum ', total
  ! The query API: unavailable plainly and without SONDE_REGIONS=on (the
  ! expected output); with it, tests/api/query.sh checks the calls.
  st = sonde_query_region("solve", SONDE_THREAD, rs)
  if (st == SONDE_OK) then
    write (*, '(a,i0,a)') 'query: solve ', rs%calls, ' calls'
  else if (st == SONDE_UNAVAILABLE) then
    write (*, '(a)') 'query: unavailable'
  else
    write (*, '(a)') 'query: none'
  end if

contains
  subroutine usage()
    write (0, '(a)') 'usage: api_f [ITERATIONS]'
    stop 2
  end subroutine usage
end program api_f
