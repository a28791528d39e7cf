/* intentionally empty: see module.modulemap */
