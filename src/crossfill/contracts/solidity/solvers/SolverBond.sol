// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.30;

import {SafeTransfer} from "../lib/SafeTransfer.sol";

/// @title SolverBond
/// @notice The bonds external solvers post to win exclusive fills. A solver deposits a bond in a
/// currency (the zero address: the chain's gas currency); the operator's allocator may debit it
/// (a fade's cost, paid to whom the allocator names). Withdrawing takes two steps: a request moves
/// the amount out of the bond at once (the service stops counting it), and the solver takes it
/// once `withdrawalDelay` has passed, so a bond cannot leave between a win and its fill; until
/// then the allocator may still debit the amount withdrawn.
contract SolverBond {
    struct Withdrawal {
        uint256 amount;
        uint256 unlocksAt;
    }

    event Bonded(address indexed solver, address indexed currency, uint256 amount);
    event WithdrawalRequested(
        address indexed solver, address indexed currency, uint256 amount, uint256 unlocksAt
    );
    event Withdrawn(address indexed solver, address indexed currency, uint256 amount);
    event Debited(
        address indexed solver, address indexed currency, uint256 amount, address to, bytes32 orderId
    );

    error NotAllocator(address caller);
    error ZeroAmount();
    error BondTooSmall(uint256 bond, uint256 amount);
    error StillLocked(uint256 unlocksAt);
    error WrongValue(uint256 value);

    address public immutable allocator;
    uint256 public immutable withdrawalDelay;
    /// solver => currency => bonded amount (what the service counts).
    mapping(address => mapping(address => uint256)) public bondOf;
    /// solver => currency => the amount on its way out, and when it may leave.
    mapping(address => mapping(address => Withdrawal)) public pendingWithdrawal;

    constructor(address allocator_, uint256 withdrawalDelay_) {
        allocator = allocator_;
        withdrawalDelay = withdrawalDelay_;
    }

    /// @notice Bond `amount` of `currency` (sent with the call for the gas currency; pulled with
    /// `transferFrom` for an ERC-20, approved beforehand).
    function deposit(address currency, uint256 amount) external payable {
        if (amount == 0) revert ZeroAmount();
        if (currency == address(0)) {
            if (msg.value != amount) revert WrongValue(msg.value);
        } else {
            if (msg.value != 0) revert WrongValue(msg.value);
            SafeTransfer.safeTransferFrom(currency, msg.sender, address(this), amount);
        }
        bondOf[msg.sender][currency] += amount;
        emit Bonded(msg.sender, currency, amount);
    }

    /// @notice Move `amount` out of the bond; it may be withdrawn after the delay (a second
    /// request adds to the first and restarts the delay).
    function requestWithdrawal(address currency, uint256 amount) external {
        uint256 bond = bondOf[msg.sender][currency];
        if (amount == 0) revert ZeroAmount();
        if (amount > bond) revert BondTooSmall(bond, amount);
        bondOf[msg.sender][currency] = bond - amount;
        Withdrawal storage pending = pendingWithdrawal[msg.sender][currency];
        pending.amount += amount;
        pending.unlocksAt = block.timestamp + withdrawalDelay;
        emit WithdrawalRequested(msg.sender, currency, amount, pending.unlocksAt);
    }

    /// @notice Take what was requested, once the delay has passed.
    function withdraw(address currency) external {
        Withdrawal memory pending = pendingWithdrawal[msg.sender][currency];
        if (pending.amount == 0) revert ZeroAmount();
        if (block.timestamp < pending.unlocksAt) revert StillLocked(pending.unlocksAt);
        delete pendingWithdrawal[msg.sender][currency];
        _pay(currency, msg.sender, pending.amount);
        emit Withdrawn(msg.sender, currency, pending.amount);
    }

    /// @notice The allocator takes `amount` of a solver's bond (its withdrawal on the way out
    /// after the bond itself) and pays it to `to`, for the order `orderId`.
    function debit(address solver, address currency, uint256 amount, address to, bytes32 orderId)
        external
    {
        if (msg.sender != allocator) revert NotAllocator(msg.sender);
        uint256 bond = bondOf[solver][currency];
        Withdrawal storage pending = pendingWithdrawal[solver][currency];
        if (amount > bond + pending.amount) revert BondTooSmall(bond + pending.amount, amount);
        if (amount <= bond) {
            bondOf[solver][currency] = bond - amount;
        } else {
            bondOf[solver][currency] = 0;
            pending.amount -= amount - bond;
        }
        _pay(currency, to, amount);
        emit Debited(solver, currency, amount, to, orderId);
    }

    function _pay(address currency, address to, uint256 amount) private {
        if (currency == address(0)) {
            SafeTransfer.sendNative(to, amount);
        } else {
            SafeTransfer.safeTransfer(currency, to, amount);
        }
    }
}
