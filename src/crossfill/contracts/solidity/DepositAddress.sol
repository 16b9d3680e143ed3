// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.30;

import {Owned} from "./lib/Owned.sol";
import {SafeTransfer} from "./lib/SafeTransfer.sol";
import {TypedSignatures} from "./lib/TypedSignatures.sol";

interface IDepositoryDeposits {
    function depositNative(address depositor, bytes32 id) external payable;
    function depositErc20(address depositor, address token, uint256 amount, bytes32 id) external;
}

/// @title DepositAddress
/// @notice The code behind every deposit address: each address is an EIP-1167 clone of this
/// contract, deployed by its factory with CREATE2 only when funds have arrived. It takes plain
/// transfers (native or ERC-20) and lets only its factory move them: into the Depository as a
/// deposit for an order, or to the address's recovery address.
contract DepositAddress {
    /// @dev An immutable lives in this contract's code, which every clone runs by delegatecall.
    address public immutable factory;

    error OnlyFactory(address caller);

    constructor() {
        factory = msg.sender;
    }

    modifier onlyFactory() {
        if (msg.sender != factory) revert OnlyFactory(msg.sender);
        _;
    }

    receive() external payable {}

    /// @notice Deposits `amount` of `token` (0: ether) held here into `depository` for order
    /// `orderId`, credited to `depositor` (who sent it here).
    function sweep(
        address depository,
        address token,
        uint256 amount,
        address depositor,
        bytes32 orderId
    ) external onlyFactory {
        if (token == address(0)) {
            IDepositoryDeposits(depository).depositNative{value: amount}(depositor, orderId);
        } else {
            _approve(token, depository, amount);
            IDepositoryDeposits(depository).depositErc20(depositor, token, amount, orderId);
        }
    }

    /// @notice Pays `amount` of `token` (0: ether) held here to `to`.
    function pay(address token, address to, uint256 amount) external onlyFactory {
        if (token == address(0)) {
            SafeTransfer.sendNative(to, amount);
        } else {
            SafeTransfer.safeTransfer(token, to, amount);
        }
    }

    function _approve(address token, address spender, uint256 amount) private {
        (bool ok, bytes memory returned) =
            token.call(abi.encodeWithSelector(0x095ea7b3, spender, amount));
        if (!ok || (returned.length != 0 && !abi.decode(returned, (bool)))) {
            revert SafeTransfer.TokenTransferFailed(token);
        }
    }
}

/// @title DepositAddressFactory
/// @notice Deploys deposit addresses (EIP-1167 clones of one DepositAddress) with CREATE2,
/// salted by a key (the order that owns the address) and the address's recovery address, so
/// each address is known before anything is deployed. The owner (the solver) sweeps funds into
/// the Depository, deploying the clone in the same transaction; the recovery address alone
/// can pay them to itself, by an EIP-712 signature used once.
contract DepositAddressFactory is Owned {
    address public immutable implementation;
    address public immutable depository;

    /// @notice Digests of recoveries already executed: each signature pays out once.
    mapping(bytes32 => bool) public recoveryUsed;

    event DepositAddressDeployed(address depositAddress, bytes32 key, address recoveryAddress);
    event Swept(address depositAddress, address token, uint256 amount, bytes32 orderId);
    event Recovered(address depositAddress, address token, uint256 amount, address to);

    error NoRecoveryAddress();
    error RecoveryExpired(uint256 deadline);
    error RecoveryAlreadyUsed(bytes32 digest);
    error InvalidSignature();

    bytes32 public constant RECOVER_TYPEHASH = keccak256(
        "Recover(address depositAddress,address token,uint256 amount,uint256 nonce,uint256 deadline)"
    );
    bytes32 private constant NAME_HASH = keccak256("CrossfillDepositAddress");
    bytes32 private constant VERSION_HASH = keccak256("1");

    constructor(address initialOwner, address depository_) Owned(initialOwner) {
        implementation = address(new DepositAddress());
        depository = depository_;
    }

    function salt(bytes32 key, address recoveryAddress) public pure returns (bytes32) {
        return keccak256(abi.encode(key, recoveryAddress));
    }

    /// @notice The deposit address for `key` and `recoveryAddress`, deployed or not.
    function addressOf(bytes32 key, address recoveryAddress) public view returns (address) {
        bytes32 hash = keccak256(
            abi.encodePacked(bytes1(0xff), address(this), salt(key, recoveryAddress), keccak256(_cloneCode()))
        );
        return address(uint160(uint256(hash)));
    }

    /// @notice Deposits `amount` of `token` held by the deposit address into the Depository for
    /// `orderId`, deploying the address first if it has no code yet.
    function sweep(
        bytes32 key,
        address recoveryAddress,
        address token,
        uint256 amount,
        address depositor,
        bytes32 orderId
    ) external onlyOwner {
        address deposit = _deployed(key, recoveryAddress);
        DepositAddress(payable(deposit)).sweep(depository, token, amount, depositor, orderId);
        emit Swept(deposit, token, amount, orderId);
    }

    /// @notice Pays `amount` of `token` held by the deposit address to its recovery address,
    /// which signed `Recover(depositAddress, token, amount, nonce, deadline)`. Anyone may submit.
    function recover(
        bytes32 key,
        address recoveryAddress,
        address token,
        uint256 amount,
        uint256 nonce,
        uint256 deadline,
        bytes calldata signature
    ) external {
        if (recoveryAddress == address(0)) revert NoRecoveryAddress();
        if (block.timestamp > deadline) revert RecoveryExpired(deadline);
        address deposit = addressOf(key, recoveryAddress);
        bytes32 digest = TypedSignatures.digest(
            domainSeparator(), keccak256(abi.encode(RECOVER_TYPEHASH, deposit, token, amount, nonce, deadline))
        );
        if (recoveryUsed[digest]) revert RecoveryAlreadyUsed(digest);
        if (TypedSignatures.recover(digest, signature) != recoveryAddress) revert InvalidSignature();
        recoveryUsed[digest] = true;
        _deployed(key, recoveryAddress);
        DepositAddress(payable(deposit)).pay(token, recoveryAddress, amount);
        emit Recovered(deposit, token, amount, recoveryAddress);
    }

    function domainSeparator() public view returns (bytes32) {
        return TypedSignatures.domainSeparator(NAME_HASH, VERSION_HASH);
    }

    function _cloneCode() private view returns (bytes memory) {
        return abi.encodePacked(
            hex"3d602d80600a3d3981f3363d3d373d3d3d363d73",
            implementation,
            hex"5af43d82803e903d91602b57fd5bf3"
        );
    }

    function _deployed(bytes32 key, address recoveryAddress) private returns (address deposit) {
        deposit = addressOf(key, recoveryAddress);
        if (deposit.code.length != 0) return deposit;
        bytes memory code = _cloneCode();
        bytes32 cloneSalt = salt(key, recoveryAddress);
        address created;
        assembly {
            created := create2(0, add(code, 0x20), mload(code), cloneSalt)
        }
        require(created == deposit, "clone not deployed");
        emit DepositAddressDeployed(deposit, key, recoveryAddress);
    }
}
