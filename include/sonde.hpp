/* sonde.hpp - C++ scope guards over the sonde annotation API (sonde.h).
 *
 * Header-only, C++11, no exceptions thrown, no RTTI, no allocation: it works
 * with -fno-exceptions -fno-rtti. Like sonde.h, it needs no library: every
 * call goes through sonde.h's weak references, so the program runs unchanged
 * without sonde and its annotations are live under `sonde run` (or
 * LD_PRELOAD=libsonde.so). Documented with examples in docs/API.md.
 *
 *   sonde::region r("solve");               // sonde_region_begin/_end
 *   sonde::scope p("phase", "solve");        // sonde_begin/_end by name
 *   sonde::scope s("iteration", i);          // sonde_begin_int/_end
 *
 *   sonde::attribute it("iteration", SONDE_INT);   // once, outside the loop
 *   for (int64_t i = 0; i < n; i++) {
 *       sonde::scope s(it, i);                      // by handle: no hashing
 *       ...
 *   }
 *
 * Guards end what they began when they go out of scope, so nesting follows
 * C++ scopes and is always well formed. Guards are neither copyable nor
 * movable: a value is closed exactly once, by the object that opened it.
 */
#ifndef SONDE_HPP
#define SONDE_HPP

#include <stdint.h>

#include <type_traits>

#include "sonde.h"

namespace sonde {

/* True when the sonde runtime is loaded and sampling this process. */
inline bool active() noexcept
{
	return sonde_active() != 0;
}

/* Replaces the innermost open value of `attr` (opens one if none is open):
 * the loop-iteration case, without a guard. Close it with end(attr). */
inline void set(const char *attr, const char *value) noexcept
{
	sonde_set(attr, value);
}

template <class T, typename std::enable_if<std::is_integral<T>::value, int>::type = 0>
inline void set(const char *attr, T value) noexcept
{
	sonde_set_int(attr, static_cast<int64_t>(value));
}

inline void end(const char *attr) noexcept
{
	sonde_end(attr);
}

/* An attribute handle: created (or found) once by name, with a value type
 * (SONDE_STRING, SONDE_INT, SONDE_DOUBLE) and a scope (SONDE_THREAD, the
 * default, or SONDE_PROCESS). Handles are process-wide and never freed by
 * the runtime; destroying this object closes nothing. When sonde is not
 * loaded the handle is null and every use of it does nothing. */
class attribute {
public:
	explicit attribute(const char *name, int type = SONDE_STRING,
			   int scope = SONDE_THREAD) noexcept
		: h_(sonde_attr_create(name, type, scope))
	{
	}
	attribute(const attribute &) = delete;
	attribute &operator=(const attribute &) = delete;

	sonde_attr_t handle() const noexcept { return h_; }

	void begin(const char *value) noexcept { sonde_attr_begin_str(h_, value); }
	void begin(double value) noexcept { sonde_attr_begin_double(h_, value); }
	template <class T, typename std::enable_if<std::is_integral<T>::value, int>::type = 0>
	void begin(T value) noexcept
	{
		sonde_attr_begin_int(h_, static_cast<int64_t>(value));
	}

	void set(const char *value) noexcept { sonde_attr_set_str(h_, value); }
	void set(double value) noexcept { sonde_attr_set_double(h_, value); }
	template <class T, typename std::enable_if<std::is_integral<T>::value, int>::type = 0>
	void set(T value) noexcept
	{
		sonde_attr_set_int(h_, static_cast<int64_t>(value));
	}

	void end() noexcept { sonde_attr_end(h_); }

private:
	sonde_attr_t h_;
};

/* A named region (attribute "region") open for the guard's lifetime. The
 * name must stay valid until the guard is destroyed (a string literal). */
class region {
public:
	explicit region(const char *name) noexcept : name_(name) { sonde_region_begin(name_); }
	~region() { sonde_region_end(name_); }
	region(const region &) = delete;
	region &operator=(const region &) = delete;

private:
	const char *name_;
};

/* A value of an attribute, open for the guard's lifetime: by name (the
 * attribute is thread-scope; string or integer values) or by handle (any
 * type and scope, no string hashing: the hot-loop form). The attribute name
 * must stay valid until the guard is destroyed. */
class scope {
public:
	scope(const char *attr, const char *value) noexcept : name_(attr), h_(nullptr)
	{
		sonde_begin(attr, value);
	}
	template <class T, typename std::enable_if<std::is_integral<T>::value, int>::type = 0>
	scope(const char *attr, T value) noexcept : name_(attr), h_(nullptr)
	{
		sonde_begin_int(attr, static_cast<int64_t>(value));
	}

	scope(const attribute &a, const char *value) noexcept : name_(nullptr), h_(a.handle())
	{
		sonde_attr_begin_str(h_, value);
	}
	scope(const attribute &a, double value) noexcept : name_(nullptr), h_(a.handle())
	{
		sonde_attr_begin_double(h_, value);
	}
	template <class T, typename std::enable_if<std::is_integral<T>::value, int>::type = 0>
	scope(const attribute &a, T value) noexcept : name_(nullptr), h_(a.handle())
	{
		sonde_attr_begin_int(h_, static_cast<int64_t>(value));
	}

	~scope()
	{
		if (name_)
			sonde_end(name_);
		else
			sonde_attr_end(h_);
	}
	scope(const scope &) = delete;
	scope &operator=(const scope &) = delete;

private:
	const char *name_; /* by name, or nullptr: by handle */
	sonde_attr_t h_;   /* by handle (null when sonde is not loaded) */
};

} // namespace sonde

#endif
