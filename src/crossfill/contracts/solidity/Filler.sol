// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.30;

import {Call3Value, Calls} from "./lib/Calls.sol";
import {Owned} from "./lib/Owned.sol";
import {SafeTransfer} from "./lib/SafeTransfer.sol";
import {TypedSignatures} from "./lib/TypedSignatures.sol";
import {Router} from "./Router.sol";

/// @title Filler
/// @notice The solver's only way to fill an order: pays each recipient from the solver's own
/// inventory (ether sent with the call, tokens pulled from the solver), optionally runs calls
/// through the Router, and marks the order filled so a second fill of it reverts on-chain.
/// An order an external solver won is filled with `fillExclusive`, under terms the operator's
/// solver signed (EIP-712): only that solver may fill it until its exclusivity deadline; after
/// it, the operator's solver and the fillers the owner allows may too.
contract Filler is Owned {
    struct Payment {
        address recipient;
        address currency; // address(0) = native
        uint256 amount;
    }

    /// Who may fill an order alone, until when, and the order's own deadline.
    struct Exclusivity {
        address solver;
        uint256 deadline;
        uint256 fillDeadline;
    }

    bytes32 private constant NAME_HASH = keccak256("CrossfillFiller");
    bytes32 private constant VERSION_HASH = keccak256("1");
    /// `paymentsHash` is keccak256(abi.encode(payments)), the payments as `fillExclusive` takes them.
    bytes32 public constant EXCLUSIVE_FILL_TYPEHASH = keccak256(
        "ExclusiveFill(bytes32 orderId,address solver,uint256 exclusivityDeadline,uint256 fillDeadline,bytes32 paymentsHash)"
    );

    event OrderFilled(bytes32 indexed orderId, address indexed solver);
    event SolverChanged(address solver);
    event FillerAllowed(address indexed filler, bool allowed);

    error NotSolver(address caller);
    error AlreadyFilled(bytes32 orderId);
    error NativeValueMismatch(uint256 sent, uint256 required);
    error NotExclusiveSolver(address caller, uint256 exclusivityDeadline);
    error FillExpired(uint256 fillDeadline);
    error BadExclusivitySignature();

    address public solver;
    address payable public immutable router;
    mapping(bytes32 => bool) public filled;
    /// Besides the operator's solver, who may fill an exclusive order once its exclusivity ends.
    mapping(address => bool) public allowedFiller;

    constructor(address initialOwner, address initialSolver, address payable router_)
        Owned(initialOwner)
    {
        solver = initialSolver;
        router = router_;
        emit SolverChanged(initialSolver);
    }

    function setSolver(address newSolver) external onlyOwner {
        solver = newSolver;
        emit SolverChanged(newSolver);
    }

    function setAllowedFiller(address filler, bool allowed) external onlyOwner {
        allowedFiller[filler] = allowed;
        emit FillerAllowed(filler, allowed);
    }

    /// @dev Fill transactions append the orderId to this call's calldata for attribution; the ABI
    /// decoder ignores the suffix.
    function fill(bytes32 orderId, Payment[] calldata payments, Call3Value[] calldata calls)
        external
        payable
    {
        if (msg.sender != solver) revert NotSolver(msg.sender);
        _markFilled(orderId);

        uint256 nativePaid = _pay(payments);
        uint256 callValue = Calls.totalValue(calls);
        if (msg.value != nativePaid + callValue) {
            revert NativeValueMismatch(msg.value, nativePaid + callValue);
        }
        if (calls.length > 0) {
            Router(router).multicall{value: callValue}(calls, msg.sender, msg.sender, abi.encode(orderId));
        }
        emit OrderFilled(orderId, msg.sender);
    }

    /// @notice Fill an order an external solver won, under the terms the operator's solver signed
    /// for it: only `exclusivity.solver` may fill until `exclusivity.deadline`; after it, that
    /// solver, the operator's solver and the allowed fillers may, until `fillDeadline`. Pays
    /// exactly the signed payments (no calls), once per order as `fill`.
    function fillExclusive(
        bytes32 orderId,
        Payment[] calldata payments,
        Exclusivity calldata exclusivity,
        bytes calldata signature
    ) external payable {
        if (block.timestamp > exclusivity.fillDeadline) revert FillExpired(exclusivity.fillDeadline);
        if (
            msg.sender != exclusivity.solver
                && (block.timestamp <= exclusivity.deadline || (msg.sender != solver && !allowedFiller[msg.sender]))
        ) {
            revert NotExclusiveSolver(msg.sender, exclusivity.deadline);
        }
        if (TypedSignatures.recover(exclusiveFillDigest(orderId, payments, exclusivity), signature) != solver) {
            revert BadExclusivitySignature();
        }
        _markFilled(orderId);
        uint256 nativePaid = _pay(payments);
        if (msg.value != nativePaid) revert NativeValueMismatch(msg.value, nativePaid);
        emit OrderFilled(orderId, msg.sender);
    }

    /// @notice What the operator's solver signs for an exclusive order (EIP-712, domain
    /// `CrossfillFiller`/`1`, this contract).
    function exclusiveFillDigest(bytes32 orderId, Payment[] calldata payments, Exclusivity calldata exclusivity)
        public
        view
        returns (bytes32)
    {
        bytes32 structHash = keccak256(
            abi.encode(
                EXCLUSIVE_FILL_TYPEHASH,
                orderId,
                exclusivity.solver,
                exclusivity.deadline,
                exclusivity.fillDeadline,
                keccak256(abi.encode(payments))
            )
        );
        return TypedSignatures.digest(TypedSignatures.domainSeparator(NAME_HASH, VERSION_HASH), structHash);
    }

    function _markFilled(bytes32 orderId) private {
        if (filled[orderId]) revert AlreadyFilled(orderId);
        filled[orderId] = true;
    }

    function _pay(Payment[] calldata payments) private returns (uint256 nativePaid) {
        for (uint256 i = 0; i < payments.length; i++) {
            Payment calldata payment = payments[i];
            if (payment.currency == address(0)) {
                nativePaid += payment.amount;
                SafeTransfer.sendNative(payment.recipient, payment.amount);
            } else {
                SafeTransfer.safeTransferFrom(payment.currency, msg.sender, payment.recipient, payment.amount);
            }
        }
    }
}
