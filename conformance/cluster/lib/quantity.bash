# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# Kubernetes quantities ("80Gi", "81559Mi", "40G", "1.5Gi", "100") as whole
# numbers, to check what a capacity selector picked.  Milli-units and
# exponents never appear in device capacities the suite compares; they are
# refused with a message rather than misread.

# quantity_value QUANTITY: prints the quantity as an integer.
quantity_value() {
    local q=$1 number suffix int frac mult
    [[ $q =~ ^\+?([0-9]{1,18}(\.[0-9]{1,9})?)([KMGTPE]i|[kMGTPE])?$ ]] || {
        fail "quantity \"$q\" is not a whole-unit quantity (digits, optional fraction, Ki..Ei or k..E)"
        return 1
    }
    number=${BASH_REMATCH[1]}
    suffix=${BASH_REMATCH[3]}
    case $suffix in
    "") mult=1 ;;
    Ki) mult=$((1 << 10)) ;;
    Mi) mult=$((1 << 20)) ;;
    Gi) mult=$((1 << 30)) ;;
    Ti) mult=$((1 << 40)) ;;
    Pi) mult=$((1 << 50)) ;;
    Ei) mult=$((1 << 60)) ;;
    k) mult=1000 ;;
    M) mult=1000000 ;;
    G) mult=1000000000 ;;
    T) mult=1000000000000 ;;
    P) mult=1000000000000000 ;;
    E) mult=1000000000000000000 ;;
    esac
    int=${number%%.*}
    frac=
    [[ $number == *.* ]] && frac=${number#*.}
    # Leading zeros would make bash read octal.
    int=$((10#$int))
    if ((int > 0 && mult > 9223372036854775807 / int)); then
        fail "quantity \"$q\" does not fit in 64 bits"
        return 1
    fi
    local value=$((int * mult))
    if [[ -n $frac ]]; then
        local scale=$((10 ** ${#frac})) f=$((10#$frac))
        if (((f * mult) % scale != 0)); then
            fail "quantity \"$q\" is not a whole number"
            return 1
        fi
        value=$((value + f * mult / scale))
    fi
    printf '%s\n' "$value"
}

# quantity_cmp A B: prints -1, 0 or 1.
quantity_cmp() {
    local a b
    a=$(quantity_value "$1") || return 1
    b=$(quantity_value "$2") || return 1
    if ((a < b)); then echo -1; elif ((a > b)); then echo 1; else echo 0; fi
}
